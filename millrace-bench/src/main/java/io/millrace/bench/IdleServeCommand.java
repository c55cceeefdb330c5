package io.millrace.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server process of the idle-connections scenario: starts a system's idle server, prints {@code
 * READY}, then answers commands on its standard input: {@code MEM} (after three full collections:
 * {@code MEM heapUsed directUsed nettyDirectUsed rss}, bytes) and {@code CPU} ({@code CPU
 * processCpuNanos nanoTime}). Stops when its input ends.
 */
@Command(name = "idle-serve", hidden = true)
final class IdleServeCommand implements Callable<Integer> {
  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Override
  public Integer call() throws Exception {
    BenchServer server = Systems.byName(system).startIdleServer(port);
    try {
      System.out.println("READY");
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String command;
      while ((command = in.readLine()) != null) {
        if (command.equals("MEM")) {
          System.out.println(memory());
        } else if (command.equals("CPU")) {
          System.out.println("CPU " + processCpuNanos() + " " + System.nanoTime());
        }
        System.out.flush();
      }
    } finally {
      server.close();
    }
    return 0;
  }

  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  static String memory() throws Exception {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(300);
    }
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    long direct = 0;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        direct = pool.getMemoryUsed();
      }
    }
    long nettyDirect = io.netty.util.internal.PlatformDependent.usedDirectMemory();
    return "MEM " + heap + " " + direct + " " + nettyDirect + " " + rss();
  }

  /** Resident set size from /proc (Linux), or -1. */
  static long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (Exception e) {
      // not Linux
    }
    return -1;
  }
}
