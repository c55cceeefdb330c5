package io.millrace.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code millrace bench}: measures Millrace, grpc-java and rsocket-java side by side in one run, as
 * shared/BENCHMARKING.md describes, and prints a table (plus CSV and PNG on request).
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Measures Millrace against grpc-java and rsocket-java in one run: a server JVM and a client",
      "JVM per measurement, pinned to separate cores, one event loop each, same JVM flags."
    })
final class RunCommand implements Callable<Integer> {
  static final List<String> CORE_SYSTEMS = List.of("millrace", "grpc-java", "rsocket-java");
  static final List<String> RPC_SYSTEMS =
      List.of(
          "millrace",
          "millrace-rpc",
          "millrace-rpc-rxjava",
          "millrace-rpc-mutiny",
          "millrace-rpc-futures",
          "millrace-rpc-observer",
          "grpc-java-rpc");

  @Option(
      names = "--level",
      defaultValue = "core",
      description = {
        "core: raw payloads, no serialization (default systems: "
            + "millrace,grpc-java,rsocket-java).",
        "rpc: protobuf through generated code, bench.proto on both sides (default systems: every"
            + " Millrace RPC flavour, grpc-java-rpc, and core millrace for the share of the core)."
      })
  String level;

  @Option(
      names = "--systems",
      split = ",",
      description = "Systems to measure; the default depends on --level.")
  List<String> systems;

  @Option(
      names = "--interactions",
      split = ",",
      defaultValue = "request-response,fire-and-forget,request-stream,request-channel")
  List<String> interactions;

  @Option(names = "--sizes", split = ",", defaultValue = "8,128,512")
  List<Integer> sizes;

  @Option(names = "--warmup", defaultValue = "10", description = "Warm-up seconds per run.")
  int warmup;

  @Option(names = "--duration", defaultValue = "10", description = "Measured seconds per run.")
  int duration;

  @Option(names = "--window", defaultValue = "1024", description = "Requests in flight.")
  int window;

  @Option(names = "--large-heap", defaultValue = "1g", description = "Heap of the main pass.")
  String largeHeap;

  @Option(names = "--heap", defaultValue = "20m", description = "Heap of the small-heap pass.")
  String smallHeap;

  @Option(
      names = "--gc",
      defaultValue = "g1",
      description =
          "Collector of every process: g1 (the default), serial or parallel. The small-heap pass's"
              + " loss depends on it more than on the system (docs/benchmarks.md).")
  String gc;

  @Option(names = "--skip-heap", description = "Skip the small-heap pass.")
  boolean skipHeap;

  @Option(names = "--skip-latency", description = "Skip the latency runs.")
  boolean skipLatency;

  @Option(names = "--quick", description = "About a minute: 8 bytes, 2 s warm-up, 2 s measured.")
  boolean quick;

  @Option(names = "--csv", description = "Write one row per throughput measurement here.")
  File csv;

  @Option(names = "--png", description = "Write a throughput chart here.")
  File png;

  @Option(
      names = "--seconds-csv",
      description =
          "Write every second's message count of every run, client side and server side, here.")
  File secondsCsv;

  @Option(
      names = "--caller",
      split = ",",
      defaultValue = "loop",
      description =
          "Who issues request-response and fire-and-forget: loop (the client's event loop), thread"
              + " (an application thread, through the connection's hand-off), or both.")
  List<String> callers;

  @Option(
      names = "--transport",
      split = ",",
      defaultValue = "tcp",
      description =
          "Transports to measure Millrace over, each in the same run: tcp, tls, ws, wss, unix"
              + " (peers run over TCP only). Off TCP a system shows as millrace/tls, with its"
              + " share of millrace over TCP.")
  List<String> transports;

  @Option(
      names = "--io",
      split = ",",
      description =
          "Socket I/O kinds to measure each transport on: epoll, io_uring, nio (default: epoll"
              + " where available).")
  List<String> ioKinds;

  @Option(
      names = "--resume",
      description =
          "Also measure Millrace with session resumption on (system millrace-resume, no"
              + " disconnects) next to it; the report gives it as a share of plain Millrace.")
  boolean resume;

  @Option(
      names = "--rounds",
      defaultValue = "1",
      description =
          "Runs of the whole plan, one after another (every measurement once, then again). The"
              + " report gives each measurement's median over the rounds, and each ratio as the"
              + " median of the ratios taken within a round, with their range; on a machine whose"
              + " speed drifts, compare those, not single runs.")
  int rounds;

  @Option(
      names = "--shared-class-path",
      description =
          "Give every measured process the harness's whole class path (every system's jars), as"
              + " before 2026-12-01, instead of its own system's jars. The JDK keeps each opened"
              + " jar's directory on the heap: 2.4 MB for all of them, which a 20 MB heap feels.")
  boolean sharedClassPath;

  @Option(names = "--logs", defaultValue = "target/bench-logs", description = "Process logs.")
  Path logs;

  @Option(
      names = "--server-jvm-opts",
      defaultValue = "",
      description = "Extra JVM options for server processes (profiling), space separated.")
  String serverJvmOpts;

  @Option(
      names = "--client-jvm-opts",
      defaultValue = "",
      description = "Extra JVM options for client processes (profiling), space separated.")
  String clientJvmOpts;

  /** Every run, round after round. */
  final List<RunResult> results = new ArrayList<>();

  /**
   * Every run of one round, {@code {heap, size, interaction, caller, system, transport, io}}: the
   * heaps of one measurement next to each other (this machine's speed drifts over minutes, so a
   * change taken between runs far apart measured the drift as much as the heap).
   */
  List<Object[]> plan(List<String> heaps, List<Interaction> chosen) {
    List<Object[]> plan = new ArrayList<>();
    for (int size : sizes) {
      for (Interaction interaction : chosen) {
        boolean byThread =
            interaction == Interaction.REQUEST_RESPONSE
                || interaction == Interaction.FIRE_AND_FORGET;
        for (String caller : byThread ? callers : List.of("loop")) {
          for (String system : systems) {
            if (!Systems.byName(system).supports(interaction)) {
              continue; // (the futures flavour has no request-channel)
            }
            if (caller.equals("thread")
                && interaction == Interaction.FIRE_AND_FORGET
                && !system.startsWith("millrace")) {
              continue; // the peers' clients issue fire-and-forget from their event loop only
            }
            for (String transport : transports) {
              for (String io :
                  ioKinds == null ? java.util.Collections.<String>singletonList(null) : ioKinds) {
                boolean plain = transport.equals("tcp") && io == null;
                if (!plain && !Systems.byName(system).supportsTransport(transport)) {
                  continue;
                }
                for (String heap : heaps) {
                  plan.add(new Object[] {heap, size, interaction, caller, system, transport, io});
                }
              }
            }
          }
        }
      }
    }
    return plan;
  }

  /**
   * {@code plan} as round {@code round} runs it: with two heaps, the small one first in every
   * other.
   */
  static List<Object[]> inRoundOrder(List<Object[]> plan, int round, int heapCount) {
    List<Object[]> order = new ArrayList<>(plan);
    if (round % 2 == 0 && heapCount == 2) {
      for (int i = 0; i + 1 < order.size(); i += 2) {
        java.util.Collections.swap(order, i, i + 1);
      }
    }
    return order;
  }

  /** One result per measurement: the run itself with one round, else the rounds' medians. */
  private List<RunResult> summary = List.of();

  private final List<LatencyResult> latencies = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    if (!level.equals("core") && !level.equals("rpc")) {
      throw new IllegalArgumentException("--level is core or rpc: " + level);
    }
    if (systems == null) {
      systems = rpcLevel() ? RPC_SYSTEMS : CORE_SYSTEMS;
    }
    if (quick) {
      sizes = List.of(8);
      warmup = 2;
      duration = 2;
      skipHeap = true;
      skipLatency = true;
    }
    if (resume && systems.contains("millrace") && !systems.contains("millrace-resume")) {
      List<String> with = new ArrayList<>(systems);
      with.add(with.indexOf("millrace") + 1, "millrace-resume");
      systems = with;
    }
    for (String system : systems) {
      Systems.byName(system); // fail fast on a typo
    }
    List<String> byCaller = new ArrayList<>();
    for (String caller : callers) {
      switch (caller) {
        case "loop", "thread" -> byCaller.add(caller);
        case "both" -> byCaller.addAll(List.of("loop", "thread"));
        default ->
            throw new IllegalArgumentException("--caller takes loop, thread or both: " + caller);
      }
    }
    callers = List.copyOf(new java.util.LinkedHashSet<>(byCaller));
    for (String transport : transports) {
      if (!io.millrace.bench.millrace.BenchTransport.NAMES.contains(transport)) {
        throw new IllegalArgumentException(
            "unknown transport '"
                + transport
                + "' (expected one of "
                + io.millrace.bench.millrace.BenchTransport.NAMES
                + ")");
      }
    }
    List<Interaction> chosen = new ArrayList<>();
    for (String name : interactions) {
      chosen.add(Interaction.parse(name));
    }
    Files.createDirectories(logs);
    ProcessRunner runner =
        new ProcessRunner(logs, split(serverJvmOpts), split(clientJvmOpts), gc)
            .sharedClassPath(sharedClassPath);
    System.out.println(
        header()
            + " | GC "
            + gc
            + (sharedClassPath ? " | shared class path" : "")
            + (rounds == 1 ? "" : " | " + rounds + " rounds, interleaved"));
    List<String> heaps = new ArrayList<>(List.of(largeHeap));
    if (!skipHeap) {
      heaps.add(smallHeap);
    }
    List<Object[]> plan = plan(heaps, chosen);
    if (rounds < 1) {
      throw new IllegalArgumentException("--rounds must be at least 1: " + rounds);
    }
    int done = 0;
    for (int round = 1; round <= rounds; round++) {
      for (Object[] run : inRoundOrder(plan, round, heaps.size())) {
        RunResult r =
            throughput(
                runner,
                (String) run[4],
                (Interaction) run[2],
                (Integer) run[1],
                (String) run[0],
                (String) run[3],
                (String) run[5],
                (String) run[6]);
        r.round = round;
        results.add(r);
        System.out.printf(
            Locale.ROOT,
            "[%2d/%d]%s %s%n",
            ++done,
            plan.size() * rounds,
            rounds == 1 ? "" : " round " + round,
            line(r));
      }
    }
    summarizeRuns();
    if (!skipLatency && chosen.contains(Interaction.REQUEST_RESPONSE)) {
      latency(runner, sizes.get(0));
    }
    System.out.println();
    System.out.print(report());
    if (csv != null) {
      writeCsv(csv);
      System.out.println("CSV: " + csv);
    }
    if (png != null) {
      List<RunResult> main = new ArrayList<>();
      for (RunResult r : summary) {
        if (r.heap.equals(largeHeap) && r.caller.equals("loop")) {
          main.add(r);
        }
      }
      Chart.write(
          main,
          systems,
          "Throughput, one core per side (" + ZonedDateTime.now().toLocalDate() + ")",
          png);
      System.out.println("Chart: " + png);
    }
    return 0;
  }

  private static List<String> split(String options) {
    return options.isBlank() ? List.of() : List.of(options.trim().split("\\s+"));
  }

  private RunResult throughput(
      ProcessRunner runner,
      String system,
      Interaction interaction,
      int size,
      String heap,
      String caller,
      String transport,
      String io)
      throws IOException, InterruptedException {
    String display = RunResult.display(system, transport, io);
    RunResult result = new RunResult(display, interaction, size, heap, caller);
    result.baseSystem = system;
    result.transport = transport;
    result.io = io;
    ProcessRunner.Output out =
        runner.run(
            system,
            size,
            heap,
            display.replace('/', '-').replace('+', '-')
                + "-"
                + interaction.cliName
                + "-"
                + caller
                + "-"
                + size
                + "-"
                + heap,
            List.of(
                "--interaction",
                interaction.cliName,
                "--caller",
                caller,
                "--mode",
                "throughput",
                "--window",
                Integer.toString(window),
                "--warmup",
                Integer.toString(warmup),
                "--duration",
                Integer.toString(duration)),
            transport,
            io);
    if (out.failure() != null) {
      result.failure = out.failure();
      return result;
    }
    writeSeconds(result, out);
    List<RunResult.Tick> clientTicks = new ArrayList<>();
    long start = -1;
    long end = -1;
    for (String line : out.client()) {
      if (line.startsWith("TICK")) {
        clientTicks.add(RunResult.Tick.parse(line));
      } else if (line.startsWith("MEASURE_START")) {
        start = Long.parseLong(line.split(" ")[1]);
      } else if (line.startsWith("MEASURE_END")) {
        end = Long.parseLong(line.split(" ")[1]);
      }
    }
    List<RunResult.Tick> serverTicks = new ArrayList<>();
    for (String line : out.server()) {
      serverTicks.add(RunResult.Tick.parse(line));
    }
    if (start < 0 || end < 0) {
      result.failure = "client printed no measurement window";
      return result;
    }
    result.compute(clientTicks, serverTicks, start, end);
    return result;
  }

  /** Appends this run's per-second counts to {@link #secondsCsv}: client and server side. */
  private void writeSeconds(RunResult result, ProcessRunner.Output out) throws IOException {
    if (secondsCsv == null) {
      return;
    }
    boolean header = !secondsCsv.exists() || secondsCsv.length() == 0;
    try (PrintWriter w =
        new PrintWriter(
            Files.newBufferedWriter(
                secondsCsv.toPath(),
                StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND))) {
      if (header) {
        w.println(
            "system,interaction,caller,payload_bytes,heap,side,epoch_millis,second,messages,"
                + "meaning");
      }
      String clientMeaning = clientMeaning(result.interaction);
      writeSide(w, result, "client", out.client(), clientMeaning);
      writeSide(w, result, "server", out.server(), serverMeaning(result.interaction));
    }
  }

  private static void writeSide(
      PrintWriter w, RunResult r, String side, List<String> lines, String meaning) {
    RunResult.Tick previous = null;
    long first = -1;
    for (String line : lines) {
      if (!line.startsWith("TICK")) {
        continue;
      }
      RunResult.Tick t = RunResult.Tick.parse(line);
      if (previous != null) {
        if (first < 0) {
          first = previous.millis();
        }
        w.printf(
            Locale.ROOT,
            "%s,%s,%s,%d,%s,%s,%d,%.1f,%d,%s%n",
            r.system,
            r.interaction.cliName,
            r.caller,
            r.size,
            r.heap,
            side,
            t.millis(),
            (t.millis() - first) / 1000.0,
            t.count() - previous.count(),
            meaning);
      }
      previous = t;
    }
  }

  private static String clientMeaning(Interaction interaction) {
    switch (interaction) {
      case REQUEST_RESPONSE:
        return "responses received";
      case FIRE_AND_FORGET:
        return "messages sent";
      case REQUEST_STREAM:
        return "items received";
      default:
        return "echoes received";
    }
  }

  private static String serverMeaning(Interaction interaction) {
    switch (interaction) {
      case REQUEST_RESPONSE:
        return "requests answered";
      case FIRE_AND_FORGET:
        return "messages received";
      case REQUEST_STREAM:
        return "items sent";
      default:
        return "items echoed";
    }
  }

  private void latency(ProcessRunner runner, int size) throws IOException, InterruptedException {
    for (String system : systems) {
      latencies.add(latencyRun(runner, system, size, "ping-pong", 0));
    }
    for (int percent : new int[] {10, 50, 90}) {
      for (String system : systems) {
        RunResult max = find(system, Interaction.REQUEST_RESPONSE, size, largeHeap);
        if (max == null || !max.ok()) {
          continue;
        }
        long rate = Math.max(1, (long) (max.median * percent / 100));
        latencies.add(latencyRun(runner, system, size, percent + " % of max", rate));
      }
    }
  }

  private LatencyResult latencyRun(
      ProcessRunner runner, String system, int size, String load, long rate)
      throws IOException, InterruptedException {
    ProcessRunner.Output out =
        runner.run(
            system,
            size,
            largeHeap,
            system + "-latency-" + (rate == 0 ? "pingpong" : Long.toString(rate)),
            List.of(
                "--interaction",
                "request-response",
                "--mode",
                rate == 0 ? "pingpong" : "rate",
                "--rate",
                Long.toString(rate),
                "--warmup",
                Integer.toString(warmup),
                "--duration",
                Integer.toString(duration)));
    double achieved = Double.NaN;
    List<RunResult.Tick> ticks = new ArrayList<>();
    long start = -1;
    long end = -1;
    String latencyLine = null;
    for (String line : out.client()) {
      if (line.startsWith("TICK")) {
        ticks.add(RunResult.Tick.parse(line));
      } else if (line.startsWith("MEASURE_START")) {
        start = Long.parseLong(line.split(" ")[1]);
      } else if (line.startsWith("MEASURE_END")) {
        end = Long.parseLong(line.split(" ")[1]);
      } else if (line.startsWith("LATENCY")) {
        latencyLine = line;
      }
    }
    RunResult rates = new RunResult(system, Interaction.REQUEST_RESPONSE, size, largeHeap);
    if (start >= 0 && end >= 0) {
      rates.compute(ticks, List.of(), start, end);
      achieved = rates.ok() ? rates.median : Double.NaN;
    }
    if (latencyLine == null) {
      System.out.printf(
          Locale.ROOT, "latency %-13s %-12s failed: %s%n", system, load, out.failure());
      return new LatencyResult(system, load, rate, achieved, 0, 0, 0, 0, 0, 0);
    }
    String[] p = latencyLine.split(" ");
    LatencyResult r =
        new LatencyResult(
            system,
            load,
            rate,
            achieved,
            Long.parseLong(p[1]),
            Double.parseDouble(p[2]),
            Double.parseDouble(p[3]),
            Double.parseDouble(p[4]),
            Double.parseDouble(p[5]),
            Double.parseDouble(p[6]));
    System.out.printf(
        Locale.ROOT,
        "latency %-13s %-12s %s%n",
        system,
        load,
        String.format(
            Locale.ROOT,
            "p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f us  (%.0f/s)",
            r.p50(),
            r.p90(),
            r.p99(),
            r.p999(),
            achieved));
    return r;
  }

  private RunResult find(String system, Interaction interaction, int size, String heap) {
    return find(system, interaction, size, heap, "loop");
  }

  private RunResult find(
      String system, Interaction interaction, int size, String heap, String caller) {
    for (RunResult r : summary) {
      if (r.system.equals(system)
          && r.interaction == interaction
          && r.size == size
          && r.heap.equals(heap)
          && r.caller.equals(caller)) {
        return r;
      }
    }
    return null;
  }

  /** Makes {@link #summary} from the runs so far; {@link #report} reads it. */
  void summarizeRuns() {
    summary = summarize(results);
  }

  /** The run of round {@code round} measuring what {@code like} measures, or null. */
  private RunResult inRound(RunResult like, int round) {
    for (RunResult r : results) {
      if (r.round == round && r.sameMeasurement(like)) {
        return r;
      }
    }
    return null;
  }

  /**
   * One result per measurement, in the order first run: with one round the runs themselves; with
   * several, the median of the rounds' medians, their minimum and maximum as the range, and the
   * median allocation. A measurement that failed in every round keeps its first failure.
   */
  static List<RunResult> summarize(List<RunResult> runs) {
    List<List<RunResult>> groups = new ArrayList<>();
    for (RunResult r : runs) {
      List<RunResult> group = null;
      for (List<RunResult> g : groups) {
        if (g.get(0).sameMeasurement(r)) {
          group = g;
          break;
        }
      }
      if (group == null) {
        group = new ArrayList<>();
        groups.add(group);
      }
      group.add(r);
    }
    List<RunResult> out = new ArrayList<>();
    for (List<RunResult> group : groups) {
      if (group.size() == 1) {
        out.add(group.get(0));
        continue;
      }
      RunResult first = group.get(0);
      RunResult s = first.copyOfMeasurement();
      List<Double> medians = new ArrayList<>();
      List<Double> client = new ArrayList<>();
      List<Double> server = new ArrayList<>();
      List<Double> gcClient = new ArrayList<>();
      List<Double> gcServer = new ArrayList<>();
      List<Double> cpuClient = new ArrayList<>();
      List<Double> cpuServer = new ArrayList<>();
      for (RunResult r : group) {
        if (r.ok()) {
          medians.add(r.median);
          if (!Double.isNaN(r.cpuClient)) {
            cpuClient.add(r.cpuClient);
          }
          if (!Double.isNaN(r.cpuServer)) {
            cpuServer.add(r.cpuServer);
          }
          client.add(r.allocClient);
          server.add(r.allocServer);
          if (!Double.isNaN(r.gcClient)) {
            gcClient.add(r.gcClient);
          }
          if (!Double.isNaN(r.gcServer)) {
            gcServer.add(r.gcServer);
          }
        }
      }
      if (medians.isEmpty()) {
        s.failure = first.failure;
      } else {
        s.median = Stats.median(medians);
        s.min = java.util.Collections.min(medians);
        s.max = java.util.Collections.max(medians);
        s.allocClient = Stats.median(client);
        s.allocServer = Stats.median(server);
        s.gcClient = Stats.median(gcClient);
        s.gcServer = Stats.median(gcServer);
        s.cpuClient = Stats.median(cpuClient);
        s.cpuServer = Stats.median(cpuServer);
        s.rounds = medians.size();
      }
      out.add(s);
    }
    return out;
  }

  /**
   * {@code f} of two measurements taken in the same round, over every round both succeeded in: its
   * median, and with several rounds its range. Null when no round has both.
   */
  private Stats.Range perRound(
      RunResult a, RunResult b, java.util.function.ToDoubleBiFunction<RunResult, RunResult> f) {
    List<Double> values = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      RunResult x = inRound(a, round);
      RunResult y = inRound(b, round);
      if (x != null && y != null && x.ok() && y.ok()) {
        values.add(f.applyAsDouble(x, y));
      }
    }
    return values.isEmpty() ? null : Stats.range(values);
  }

  static String line(RunResult r) {
    if (!r.ok()) {
      return String.format(
          Locale.ROOT,
          "%-25s %4d B %-5s %-21s FAILED: %s",
          r.label(),
          r.size,
          r.heap,
          r.system,
          r.failure);
    }
    return String.format(
            Locale.ROOT,
            "%-25s %4d B %-5s %-21s %,12.0f msg/s (%,.0f - %,.0f)  alloc B/msg client %s server %s"
                + "  CPU ns/msg client %s server %s  GC %% client %s server %s"
                + "  JIT %% client %s server %s",
            r.label(),
            r.size,
            r.heap,
            r.system,
            r.median,
            r.min,
            r.max,
            bytes(r.allocClient),
            bytes(r.allocServer),
            nanos(r.cpuClient),
            nanos(r.cpuServer),
            percent(r.gcClient),
            percent(r.gcServer),
            percent(r.jitClient),
            percent(r.jitServer))
        + (r.jitBusy() ? "  (compilers busy in the window: lengthen --warmup)" : "");
  }

  /** Nanoseconds per message with one decimal, or - when unknown. */
  private static String nanos(double nanos) {
    return Double.isNaN(nanos) ? "-" : String.format(Locale.ROOT, "%.1f", nanos);
  }

  /** A share (0..1) for the CSV, or - when unknown (as the byte columns). */
  private static String share(double share) {
    return Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.4f", share);
  }

  /** A share (0..1) as a percentage with one decimal, or - when unknown. */
  private static String percent(double share) {
    return Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.1f", 100 * share);
  }

  private static String bytes(double value) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.0f", value);
  }

  static String header() {
    return String.format(
        Locale.ROOT,
        "millrace bench %s | %d cores (%s)%s | %s %s | JDK %s | Netty %s, grpc-java %s,"
            + " rsocket-java %s",
        ZonedDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE),
        Runtime.getRuntime().availableProcessors(),
        cpuModel(),
        ProcessRunner.pinned() ? ", server on cpu 1, client on cpu 0" : ", not pinned",
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        Runtime.version(),
        version("io.netty", "netty-common"),
        version("io.grpc", "grpc-core"),
        version("io.rsocket", "rsocket-core"));
  }

  /**
   * The processor's model as Linux reports it, or "cpu ?": virtual machines of one kind can land on
   * different hosts from day to day, and loopback figures differ with them.
   */
  static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or not readable
    }
    return "cpu ?";
  }

  /**
   * A dependency's version: from its Maven pom.properties, or else from its jar's file name on the
   * class path (the harness jar's manifest lists lib/ARTIFACT-VERSION.jar).
   */
  static String version(String group, String artifact) {
    String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = RunCommand.class.getResourceAsStream(resource)) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        return p.getProperty("version", "?");
      }
    } catch (IOException e) {
      // fall through to the class path
    }
    java.util.regex.Pattern jar =
        java.util.regex.Pattern.compile(
            "(?:^|/)" + java.util.regex.Pattern.quote(artifact) + "-([0-9][^/]*)\\.jar$");
    List<String> entries =
        new ArrayList<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
    for (String entry : List.copyOf(entries)) {
      if (entry.endsWith(".jar")) {
        for (Path listed : ClassPaths.manifestClassPath(Path.of(entry))) {
          entries.add(listed.toString());
        }
      }
    }
    for (String entry : entries) {
      java.util.regex.Matcher m = jar.matcher(entry);
      if (m.find()) {
        return m.group(1);
      }
    }
    return "?";
  }

  private boolean rpcLevel() {
    return "rpc".equals(level);
  }

  /**
   * What a run is compared with: at the core level, millrace against each peer ("x2.0": millrace is
   * twice as fast); at the RPC level, each Millrace RPC system against grpc-java-rpc ("x15.0":
   * fifteen times as fast) and as a share of core millrace in the same run. With several rounds
   * each is the median of the rounds' ratios, with their range.
   */
  private String ratio(RunResult r, RunResult ours, RunResult grpc, boolean rpc) {
    if (rpc) {
      if (!r.system.startsWith("millrace-rpc")) {
        return "";
      }
      Stats.Range x = grpc == null ? null : perRound(r, grpc, (a, b) -> a.median / b.median);
      Stats.Range core = ours == null ? null : perRound(r, ours, (a, b) -> a.median / b.median);
      String text = x == null ? "" : "x" + x.format("%.1f", 1);
      return core == null ? text : text + " " + core.format("%.0f", 100) + "% core";
    }
    if (ours == null || r == ours) {
      return "";
    }
    if (r.system.equals("millrace-resume") || !r.system.equals(r.baseSystem)) {
      Stats.Range share = perRound(r, ours, (a, b) -> a.median / b.median);
      return share == null ? "" : share.format("%.0f", 100) + "%";
    }
    Stats.Range times = perRound(ours, r, (a, b) -> a.median / b.median);
    return times == null ? "" : "x" + times.format("%.1f", 1);
  }

  /** The summary: throughput per group with ratios, the small-heap change, and latency. */
  String report() {
    StringBuilder out = new StringBuilder();
    Map<String, List<RunResult>> groups = new LinkedHashMap<>();
    for (RunResult r : summary) {
      if (r.heap.equals(largeHeap)) {
        groups.computeIfAbsent(r.label() + " " + r.size + " B", k -> new ArrayList<>()).add(r);
      }
    }
    out.append(
        String.format(
            Locale.ROOT,
            "Throughput (heap %s), msgs/s: median (min - max%s); %s; allocated bytes per message"
                + " client/server; CPU ns per message client/server%n",
            largeHeap,
            rounds == 1 ? " of the seconds" : " of the rounds' medians, " + rounds + " rounds",
            rpcLevel()
                ? "times grpc-java-rpc and share of core millrace"
                : "millrace's ratio to each"));
    for (Map.Entry<String, List<RunResult>> group : groups.entrySet()) {
      out.append(group.getKey()).append('\n');
      RunResult ours = null;
      RunResult grpc = null;
      for (RunResult r : group.getValue()) {
        if (r.system.equals("millrace") && r.ok()) {
          ours = r;
        } else if (r.system.equals("grpc-java-rpc") && r.ok()) {
          grpc = r;
        }
      }
      for (RunResult r : group.getValue()) {
        if (!r.ok()) {
          out.append(String.format(Locale.ROOT, "  %-21s FAILED: %s%n", r.system, r.failure));
          continue;
        }
        out.append(
            String.format(
                Locale.ROOT,
                "  %-21s %,12.0f (%,.0f - %,.0f) %14s  %s/%s  %s/%s%n",
                r.system,
                r.median,
                r.min,
                r.max,
                ratio(r, ours, grpc, rpcLevel()),
                bytes(r.allocClient),
                bytes(r.allocServer),
                nanos(r.cpuClient),
                nanos(r.cpuServer)));
      }
    }
    if (!skipHeap) {
      out.append(
          String.format(
              Locale.ROOT, "%nThroughput change at -Xmx%s against -Xmx%s%n", smallHeap, largeHeap));
      for (RunResult small : summary) {
        if (!small.heap.equals(smallHeap)) {
          continue;
        }
        RunResult large =
            find(small.system, small.interaction, small.size, largeHeap, small.caller);
        if (large == null || !large.ok() || !small.ok()) {
          out.append(
              String.format(
                  Locale.ROOT,
                  "  %-25s %4d B %-21s n/a%n",
                  small.label(),
                  small.size,
                  small.system));
          continue;
        }
        Stats.Range change = perRound(small, large, (a, b) -> a.median / b.median - 1);
        out.append(
            String.format(
                Locale.ROOT,
                "  %-25s %4d B %-21s %s %%   GC pauses client/server %s/%s %% (%s/%s %% at %s)%n",
                small.label(),
                small.size,
                small.system,
                change == null ? "n/a" : change.format("%+.1f", 100),
                percent(small.gcClient),
                percent(small.gcServer),
                percent(large.gcClient),
                percent(large.gcServer),
                largeHeap));
      }
    }
    if (!latencies.isEmpty()) {
      out.append(String.format(Locale.ROOT, "%nRequest-response round trip, microseconds%n"));
      for (LatencyResult l : latencies) {
        out.append(
            String.format(
                Locale.ROOT,
                "  %-13s %-13s p50 %8.1f  p90 %8.1f  p99 %8.1f  p99.9 %8.1f  max %9.1f  (%,.0f/s)%n",
                l.system(),
                l.load(),
                l.p50(),
                l.p90(),
                l.p99(),
                l.p999(),
                l.max(),
                l.achievedRate()));
      }
    }
    return out.toString();
  }

  private void writeCsv(File file) throws IOException {
    try (PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8)) {
      w.println(
          "system,level,interaction,payload_bytes,heap,gc,msgs_per_sec_median,msgs_per_sec_min,"
              + "msgs_per_sec_max,alloc_bytes_per_msg_client,alloc_bytes_per_msg_server,resume,"
              + "transport,io,round,gc_share_client,gc_share_server,cpu_ns_per_msg_client,"
              + "cpu_ns_per_msg_server,jit_share_client,jit_share_server,class_path");
      for (RunResult r : results) {
        if (!r.ok()) {
          continue;
        }
        w.printf(
            Locale.ROOT,
            "%s,%s,%s,%d,%s,%s,%.0f,%.0f,%.0f,%s,%s,%s,%s,%s,%d,%s,%s,%s,%s,%s,%s,%s%n",
            r.baseSystem,
            level,
            r.label(),
            r.size,
            r.heap,
            gc,
            r.median,
            r.min,
            r.max,
            bytes(r.allocClient),
            bytes(r.allocServer),
            r.system.equals("millrace-resume") ? "on" : "off",
            r.transport,
            r.io == null ? "default" : r.io,
            r.round,
            share(r.gcClient),
            share(r.gcServer),
            nanos(r.cpuClient),
            nanos(r.cpuServer),
            share(r.jitClient),
            share(r.jitServer),
            sharedClassPath ? "shared" : "own");
      }
    }
    if (!latencies.isEmpty()) {
      File latencyFile = new File(file.getPath().replaceFirst("(\\.csv)?$", ".latency.csv"));
      try (PrintWriter w = new PrintWriter(latencyFile, StandardCharsets.UTF_8)) {
        w.println(
            "system,load,target_rate,achieved_rate,count,p50_us,p90_us,p99_us,p999_us,max_us");
        for (LatencyResult l : latencies) {
          w.printf(
              Locale.ROOT,
              "%s,%s,%d,%.0f,%d,%.1f,%.1f,%.1f,%.1f,%.1f%n",
              l.system(),
              l.load(),
              l.targetRate(),
              l.achievedRate(),
              l.count(),
              l.p50(),
              l.p90(),
              l.p99(),
              l.p999(),
              l.max());
        }
      }
    }
  }
}
