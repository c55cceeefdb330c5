package io.millrace.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code millrace bench idle-connections}: what many idle connections cost a server. For each
 * system, a server JVM (pinned to CPU 1) and a client JVM (CPU 0): the client opens {@code
 * --connections} connections that only send keepalives every {@code --keepalive} seconds; the
 * harness reports the server's memory per connection (heap after full collections, Netty's direct
 * memory, resident set size, each against a baseline taken before the connections, after one
 * warm-up connection), the server's CPU use over {@code --idle} seconds of idleness after {@code
 * --warmup} seconds of it (the JIT compiles the keepalive and connect paths meanwhile; measured
 * earlier, its compiler threads were most of the figure), and the time a request on a new
 * connection takes meanwhile (connect to response).
 */
@Command(
    name = "idle-connections",
    mixinStandardHelpOptions = true,
    description = {
      "What idle connections cost a server: memory per connection and CPU while idle, Millrace",
      "next to grpc-java and rsocket-java, with a request on a fresh connection now and then."
    })
final class IdleCommand implements Callable<Integer> {
  @Option(names = "--systems", split = ",", defaultValue = "millrace,grpc-java,rsocket-java")
  List<String> systems;

  @Option(
      names = "--connections",
      defaultValue = "19000",
      description = "Connections to open (default: ${DEFAULT-VALUE}, within a 20,000-file limit).")
  int connections;

  @Option(names = "--keepalive", defaultValue = "30", description = "Keepalive interval, seconds.")
  int keepAliveSeconds;

  @Option(names = "--idle", defaultValue = "70", description = "Seconds of idleness measured.")
  int idleSeconds;

  @Option(
      names = "--warmup",
      defaultValue = "90",
      description =
          "Seconds of idleness (with probes) before measuring, so that the JIT has compiled the"
              + " keepalive and connect paths: otherwise the compiler threads dominate the figure.")
  int warmupSeconds;

  @Option(names = "--probe-every", defaultValue = "10", description = "Seconds between probes.")
  int probeEverySeconds;

  @Option(names = "--server-heap", defaultValue = "4g")
  String serverHeap;

  @Option(names = "--client-heap", defaultValue = "6g")
  String clientHeap;

  @Option(names = "--csv", description = "Write one row per system here.")
  File csv;

  @Option(
      names = "--server-jvm-opts",
      defaultValue = "",
      description = "Extra JVM options for the server processes (profiling), space separated.")
  String serverJvmOpts;

  @Option(names = "--logs", defaultValue = "target/bench-logs", description = "Process logs.")
  Path logs;

  /** One system's figures. */
  record Result(
      String system,
      int connections,
      double heapPerConnection,
      double directPerConnection,
      double rssPerConnection,
      double idleCpuPercent,
      double probeMedianMillis,
      double probeMaxMillis,
      double openSeconds,
      String failure) {}

  @Override
  public Integer call() throws Exception {
    Files.createDirectories(logs);
    System.out.println(RunCommand.header());
    System.out.printf(
        Locale.ROOT,
        "idle connections: %d per system, keepalive %d s, %d s idle measured, probe every %d s%n",
        connections,
        keepAliveSeconds,
        idleSeconds,
        probeEverySeconds);
    List<Result> results = new ArrayList<>();
    for (String system : systems) {
      Systems.byName(system);
      Result r = measure(system);
      results.add(r);
      System.out.println(line(r));
    }
    System.out.println();
    System.out.println(
        "system          conns  heap B/conn  direct B/conn  RSS B/conn  idle CPU %  probe ms"
            + " (median/max)  open s");
    for (Result r : results) {
      System.out.println(line(r));
    }
    if (csv != null) {
      try (PrintWriter w = new PrintWriter(csv, StandardCharsets.UTF_8)) {
        w.println(
            "system,connections,heap_bytes_per_conn,direct_bytes_per_conn,rss_bytes_per_conn,"
                + "idle_cpu_percent_of_one_core,probe_ms_median,probe_ms_max,open_seconds");
        for (Result r : results) {
          if (r.failure() == null) {
            w.printf(
                Locale.ROOT,
                "%s,%d,%.0f,%.0f,%.0f,%.2f,%.2f,%.2f,%.1f%n",
                r.system(),
                r.connections(),
                r.heapPerConnection(),
                r.directPerConnection(),
                r.rssPerConnection(),
                r.idleCpuPercent(),
                r.probeMedianMillis(),
                r.probeMaxMillis(),
                r.openSeconds());
          }
        }
      }
      System.out.println("CSV: " + csv);
    }
    return 0;
  }

  static String line(Result r) {
    if (r.failure() != null) {
      return String.format(Locale.ROOT, "%-13s FAILED: %s", r.system(), r.failure());
    }
    return String.format(
        Locale.ROOT,
        "%-13s %7d  %11.0f  %13.0f  %10.0f  %10.2f  %8.2f / %-8.2f  %6.1f",
        r.system(),
        r.connections(),
        r.heapPerConnection(),
        r.directPerConnection(),
        r.rssPerConnection(),
        r.idleCpuPercent(),
        r.probeMedianMillis(),
        r.probeMaxMillis(),
        r.openSeconds());
  }

  /** A process that answers one line per command. */
  private static final class Peer implements AutoCloseable {
    final Process process;
    final Writer input;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    Peer(Process process) {
      this.process = process;
      this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader out =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = out.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  // the process ended
                }
              },
              "idle-reader");
      reader.setDaemon(true);
      reader.start();
    }

    /** Waits for the next line starting with {@code prefix} (others are skipped). */
    String await(String prefix, long seconds) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      while (true) {
        long left = deadline - System.nanoTime();
        String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
        if (line == null) {
          throw new IllegalStateException("no " + prefix + " within " + seconds + " s");
        }
        if (line.startsWith(prefix)) {
          return line;
        }
      }
    }

    String ask(String command, String answerPrefix, long seconds)
        throws IOException, InterruptedException {
      input.write(command + "\n");
      input.flush();
      return await(answerPrefix, seconds);
    }

    @Override
    public void close() {
      try {
        input.close();
      } catch (IOException e) {
        // already gone
      }
      try {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  private Result measure(String system) throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    try (Peer server =
            new Peer(
                start(
                    "1",
                    serverHeap,
                    system + "-idle-server.log",
                    List.of("idle-serve", "--system", system, "--port", Integer.toString(port))));
        Peer client = startClient(system, port, server)) {
      client.await("WARMED", 60);
      long[] before = numbers(server.ask("MEM", "MEM", 60));
      String opened = client.ask("OPEN", "OPENED", 900);
      long[] open = numbers(opened);
      if (open[0] < connections) {
        return failed(system, "only " + open[0] + " of " + connections + " connections opened");
      }
      idle(client, warmupSeconds, new ArrayList<>());
      long[] after = numbers(server.ask("MEM", "MEM", 120));
      long[] cpuStart = numbers(server.ask("CPU", "CPU", 10));
      List<Double> probes = new ArrayList<>();
      idle(client, idleSeconds, probes);
      long[] cpuEnd = numbers(server.ask("CPU", "CPU", 10));
      long stillOpen = numbers(client.ask("COUNT", "COUNT", 60))[0];
      if (stillOpen < connections) {
        return failed(system, (connections - stillOpen) + " connections closed while idle");
      }
      Collections.sort(probes);
      double cpuPercent = 100.0 * (cpuEnd[0] - cpuStart[0]) / (cpuEnd[1] - cpuStart[1]);
      return new Result(
          system,
          connections,
          (double) (after[0] - before[0]) / connections,
          (double) (Math.max(after[1], after[2]) - Math.max(before[1], before[2])) / connections,
          (double) (after[3] - before[3]) / connections,
          cpuPercent,
          probes.isEmpty() ? Double.NaN : probes.get(probes.size() / 2),
          probes.isEmpty() ? Double.NaN : probes.get(probes.size() - 1),
          open[1] / 1000.0,
          null);
    } catch (Exception e) {
      return failed(system, e.getMessage() + " (see " + logs + ")");
    }
  }

  /** Waits {@code seconds}, probing every {@code --probe-every}; adds each probe in ms. */
  private void idle(Peer client, int seconds, List<Double> probes) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      long sleep = Math.min(TimeUnit.SECONDS.toNanos(probeEverySeconds), end - System.nanoTime());
      TimeUnit.NANOSECONDS.sleep(Math.max(0, sleep));
      if (System.nanoTime() < end) {
        probes.add(numbers(client.ask("PROBE", "PROBE", 30))[0] / 1000.0);
      }
    }
  }

  private Peer startClient(String system, int port, Peer server) throws IOException {
    try {
      server.await("READY", 60);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    return new Peer(
        start(
            "0",
            clientHeap,
            system + "-idle-client.log",
            List.of(
                "idle-drive",
                "--system",
                system,
                "--port",
                Integer.toString(port),
                "--connections",
                Integer.toString(connections),
                "--keepalive",
                Integer.toString(keepAliveSeconds))));
  }

  private Result failed(String system, String why) {
    return new Result(system, connections, 0, 0, 0, 0, 0, 0, 0, why);
  }

  /** The numbers after the first word of a reply line. */
  private static long[] numbers(String line) {
    String[] parts = line.trim().split("\\s+");
    long[] values = new long[parts.length - 1];
    for (int i = 1; i < parts.length; i++) {
      values[i - 1] = Long.parseLong(parts[i]);
    }
    return values;
  }

  private Process start(String cpu, String heap, String logName, List<String> args)
      throws IOException {
    List<String> command = new ArrayList<>();
    if (ProcessRunner.pinned()) {
      command.addAll(List.of("/usr/bin/taskset", "-c", cpu));
    }
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ProcessRunner.jvmFlags(heap));
    if (cpu.equals("1") && !serverJvmOpts.isBlank()) {
      command.addAll(List.of(serverJvmOpts.trim().split("\\s+")));
    }
    command.add("-cp");
    command.add(ClassPaths.forProcess(args)); // its own system's jars, as the matrix's processes
    command.add(BenchMain.class.getName());
    command.addAll(args);
    return new ProcessBuilder(command).redirectError(logs.resolve(logName).toFile()).start();
  }
}
