package io.millrace.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs one measurement: a server JVM and a client JVM, each pinned to its own core with {@code
 * taskset} when the machine has it, with the same JVM flags for every system.
 */
public final class ProcessRunner {
  private static final boolean TASKSET = new File("/usr/bin/taskset").canExecute();
  private final Path logDir;
  private final List<String> serverOptions;
  private final List<String> clientOptions;
  private final String gc;
  private boolean sharedClassPath;

  public ProcessRunner(Path logDir, List<String> serverOptions, List<String> clientOptions) {
    this(logDir, serverOptions, clientOptions, "g1");
  }

  /** With collector {@code gc} (one of {@link #COLLECTORS}) in every process. */
  public ProcessRunner(
      Path logDir, List<String> serverOptions, List<String> clientOptions, String gc) {
    gcFlag(gc); // fail fast on a typo
    this.logDir = logDir;
    this.serverOptions = serverOptions;
    this.clientOptions = clientOptions;
    this.gc = gc;
  }

  /**
   * Measured processes get this harness's whole class path, every system's jars, as before the
   * fortieth session, instead of their own system's ({@link ClassPaths}); processes of commands
   * that class does not know always do.
   */
  ProcessRunner sharedClassPath(boolean shared) {
    this.sharedClassPath = shared;
    return this;
  }

  public static boolean pinned() {
    return TASKSET && Runtime.getRuntime().availableProcessors() >= 2;
  }

  /** The output of a client process and the ticks its server printed meanwhile. */
  public record Output(List<String> client, List<String> server, String failure) {}

  Output run(String system, int size, String heap, String runName, List<String> driveArgs)
      throws IOException, InterruptedException {
    return run(system, size, heap, runName, driveArgs, "tcp", null);
  }

  /** As {@link #run(String, int, String, String, List)}, over {@code transport} and {@code io}. */
  Output run(
      String system,
      int size,
      String heap,
      String runName,
      List<String> driveArgs,
      String transport,
      String io)
      throws IOException, InterruptedException {
    List<String> common =
        new ArrayList<>(
            List.of(
                "--system",
                system,
                "--size",
                Integer.toString(size),
                "--port",
                PORT,
                "--transport",
                transport));
    if (io != null) {
      common.addAll(List.of("--io", io));
    }
    List<String> serve = new ArrayList<>(List.of("serve"));
    serve.addAll(common);
    List<String> drive = new ArrayList<>(List.of("drive"));
    drive.addAll(driveArgs);
    drive.addAll(common);
    // The client runs its warm-up and measurement; a minute more is for starting and stopping.
    Output out = run(runName, heap, serve, drive, seconds(driveArgs) + 60);
    List<String> ticks = new ArrayList<>();
    for (String line : out.server()) {
      if (line.startsWith("TICK")) {
        ticks.add(line);
      }
    }
    return new Output(out.client(), ticks, out.failure());
  }

  /** The seconds of {@code --warmup} and {@code --duration} in a drive command's arguments. */
  private static int seconds(List<String> driveArgs) {
    int total = 0;
    for (int i = 0; i + 1 < driveArgs.size(); i++) {
      String a = driveArgs.get(i);
      if (a.equals("--warmup") || a.equals("--duration")) {
        total += Integer.parseInt(driveArgs.get(i + 1));
      }
    }
    return total;
  }

  /** In the arguments of {@link #run(String, String, List, List, int)}: the server's port. */
  public static final String PORT = "{port}";

  /**
   * Starts a server process with {@code serverArgs} on the second core, waits for it to print
   * {@code READY}, runs a client process with {@code clientArgs} on the first until it exits (at
   * most {@code clientSeconds}), then stops the server by closing its input. {@link #PORT} in the
   * arguments becomes a free port. Returns everything the client printed and every line but READY
   * the server printed, through its exit.
   */
  public Output run(
      String runName,
      String heap,
      List<String> serverArgs,
      List<String> clientArgs,
      int clientSeconds)
      throws IOException, InterruptedException {
    return run(runName, heap, heap, serverArgs, clientArgs, clientSeconds);
  }

  /**
   * As {@link #run(String, String, List, List, int)}, the client with a heap of its own: a scenario
   * that measures a server in a small heap must not squeeze its load generator too.
   */
  public Output run(
      String runName,
      String heap,
      String clientHeap,
      List<String> serverArgs,
      List<String> clientArgs,
      int clientSeconds)
      throws IOException, InterruptedException {
    String port = Integer.toString(freePort());
    Path serverLog = logDir.resolve(runName + "-server.log");
    Path clientLog = logDir.resolve(runName + "-client.log");
    Process server = start("1", heap, serverLog, withPort(serverArgs, port));
    List<String> serverLines = new CopyOnWriteArrayList<>();
    CountDownLatch ready = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  if (line.equals("READY")) {
                    ready.countDown();
                  } else {
                    serverLines.add(line);
                  }
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "bench-server-reader");
    reader.setDaemon(true);
    reader.start();
    String failure = null;
    List<String> clientLines = new ArrayList<>();
    try {
      if (!awaitReady(ready, server)) {
        failure = "server did not start: " + cause(serverLog) + " (see " + serverLog + ")";
      } else {
        Process client = start("0", clientHeap, clientLog, withPort(clientArgs, port));
        client.getOutputStream().close();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread clientReader = drain(client, lines);
        if (!client.waitFor(clientSeconds, TimeUnit.SECONDS)) {
          client.destroyForcibly();
          client.waitFor(10, TimeUnit.SECONDS);
          failure = "client did not exit in " + clientSeconds + " s: see " + clientLog;
        } else if (client.exitValue() != 0) {
          failure = "client failed (exit " + client.exitValue() + "): " + tail(clientLog);
        }
        clientReader.join(5_000);
        clientLines.addAll(lines);
      }
    } finally {
      stop(server);
      reader.join(5_000); // what the server printed on its way out
    }
    return new Output(clientLines, List.copyOf(serverLines), failure);
  }

  /** Reads {@code process}'s output into {@code lines} on a daemon thread until it ends. */
  private static Thread drain(Process process, List<String> lines) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  lines.add(line);
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "bench-client-reader");
    reader.setDaemon(true);
    reader.start();
    return reader;
  }

  private static List<String> withPort(List<String> args, String port) {
    List<String> out = new ArrayList<>(args.size());
    for (String a : args) {
      out.add(a.equals(PORT) ? port : a);
    }
    return out;
  }

  /** Whether the server said READY within a minute; false at once when it exits before. */
  private static boolean awaitReady(CountDownLatch ready, Process server)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (ready.await(100, TimeUnit.MILLISECONDS)) {
        return true;
      }
      if (!server.isAlive()) {
        return ready.await(1, TimeUnit.SECONDS); // its last lines may still be in the pipe
      }
    }
    return false;
  }

  /** The log's first and last lines that name an exception or error, else its last lines. */
  private static String cause(Path log) throws IOException {
    List<String> named = new ArrayList<>();
    for (String line : Files.readAllLines(log)) {
      if (!line.startsWith("\t") && (line.contains("Exception") || line.contains("Error"))) {
        named.add(line);
      }
    }
    if (named.isEmpty()) {
      return tail(log);
    }
    String first = named.get(0);
    String last = named.get(named.size() - 1);
    return first.equals(last) ? first : first + " | " + last;
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
  }

  private static void stop(Process server) throws InterruptedException {
    try {
      OutputStream in = server.getOutputStream();
      in.close();
    } catch (IOException e) {
      // already gone
    }
    if (!server.waitFor(15, TimeUnit.SECONDS)) {
      server.destroyForcibly();
      server.waitFor(5, TimeUnit.SECONDS);
    }
  }

  private Process start(String cpu, String heap, Path log, List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    if (pinned()) {
      command.addAll(List.of("/usr/bin/taskset", "-c", cpu));
    }
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags(heap, gc));
    command.add(PRE_TOUCH);
    command.addAll(cpu.equals("1") ? serverOptions : clientOptions);
    command.add("-cp");
    command.add(
        sharedClassPath ? System.getProperty("java.class.path") : ClassPaths.forProcess(args));
    command.add(BenchMain.class.getName());
    command.addAll(args);
    return new ProcessBuilder(command).redirectError(log.toFile()).start();
  }

  /**
   * Every measured process touches its whole heap at start. Without it the kernel maps the heap's
   * pages as they are first written, and a system that allocates per message pays those faults
   * inside the measured window: on 2026-11-25 a 1 GiB client of RPC request-stream (200 B/msg) was
   * still faulting ten seconds in (9 % of its CPU samples in the kernel's page clearing), and its
   * rate rose from 2.7-3.9 to 4.7-5.0 M/s with this flag while the core's (40 B/msg) did not move
   * (docs/benchmarks.md). The idle-connection census leaves it off: it counts resident memory.
   */
  static final String PRE_TOUCH = "-XX:+AlwaysPreTouch";

  /** The same flags for every system, with G1. */
  static List<String> jvmFlags(String heap) {
    return jvmFlags(heap, "g1");
  }

  /** The collectors {@code --gc} takes. */
  public static final List<String> COLLECTORS = List.of("g1", "serial", "parallel");

  static String gcFlag(String gc) {
    return switch (gc) {
      case "g1" -> "-XX:+UseG1GC";
      case "serial" -> "-XX:+UseSerialGC";
      case "parallel" -> "-XX:+UseParallelGC";
      default ->
          throw new IllegalArgumentException("--gc takes one of " + COLLECTORS + ", not " + gc);
    };
  }

  /** The same flags for every system, with collector {@code gc} (one of {@link #COLLECTORS}). */
  static List<String> jvmFlags(String heap, String gc) {
    return List.of(
        "-Xms" + heap,
        "-Xmx" + heap,
        gcFlag(gc),
        "-Dio.netty.leakDetection.level=disabled",
        "--enable-native-access=ALL-UNNAMED",
        "-Djava.awt.headless=true");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
