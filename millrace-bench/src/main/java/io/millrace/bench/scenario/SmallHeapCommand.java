package io.millrace.bench.scenario;

import io.millrace.bench.Chart;
import io.millrace.bench.ProcessRunner;
import java.io.File;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code millrace bench small-heap}: a unary service whose handler blocks for a simulated delay,
 * called by 1 to 1,000 concurrent clients, in JVMs of 20 MB and of 256 MB: how many calls a second
 * each system serves, their average and p99 round trip, what they add beyond the delay, and the
 * time both processes spent collecting garbage while measured. The heap is the server's; the load
 * generator always has {@link #CLIENT_HEAP}. Millrace's handlers run on virtual threads where the
 * JDK has them (run the harness on JDK 21+ for that; on 17 they run on a thread pool, as
 * grpc-java's and the REST server's do).
 */
@Command(
    name = "small-heap",
    mixinStandardHelpOptions = true,
    description = {
      "A unary service with a simulated delay, 1 to 1,000 concurrent clients, at -Xmx20m and",
      "-Xmx256m: Millrace RPC, grpc-java, REST/JSON; calls/s, round trips, GC time."
    })
public final class SmallHeapCommand implements Callable<Integer> {
  @Option(names = "--systems", split = ",", defaultValue = "millrace,grpc-java,rest")
  List<String> systems;

  @Option(names = "--clients", split = ",", defaultValue = "1,10,100,500,1000")
  List<Integer> clients;

  @Option(names = "--delays-us", split = ",", defaultValue = "0,100,1000")
  List<Integer> delays;

  @Option(names = "--heaps", split = ",", defaultValue = "20m,256m")
  List<String> heaps;

  @Option(names = "--size", defaultValue = "128", description = "Message payload bytes.")
  int size;

  @Option(names = "--warmup", defaultValue = "3", description = "Warm-up seconds per run.")
  int warmup;

  @Option(names = "--duration", defaultValue = "5", description = "Measured seconds per run.")
  int duration;

  @Option(
      names = "--quick",
      description = "About a minute: 1 and 100 clients, delays 0 and 1 ms, -Xmx20m, 2 s runs.")
  boolean quick;

  @Mixin ScenarioOutput output = new ScenarioOutput();

  /** One run: its settings and what the client (and the server's GC line) said. */
  record Result(
      String system,
      String heap,
      int delayMicros,
      int clients,
      long calls,
      double seconds,
      Latency.Summary latency,
      long errors,
      long clientGcMillis,
      long serverGcMillis,
      String failure) {

    double rate() {
      return calls / seconds;
    }
  }

  /** The load generator's heap: the server's heap is what the scenario varies. */
  static final String CLIENT_HEAP = "512m";

  private final List<Result> results = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    if (quick) {
      clients = List.of(1, 100);
      delays = List.of(0, 1000);
      heaps = List.of("20m");
      warmup = 1;
      duration = 2;
    }
    for (String s : systems) {
      if (!UnarySystems.NAMES.contains(s)) {
        throw new IllegalArgumentException("unknown system " + s + ": " + UnarySystems.NAMES);
      }
    }
    ProcessRunner runner = output.runner();
    int total = heaps.size() * delays.size() * clients.size() * systems.size();
    int done = 0;
    for (String heap : heaps) {
      for (int delay : delays) {
        for (int n : clients) {
          for (String system : systems) {
            Result r = run(runner, system, heap, delay, n);
            results.add(r);
            System.out.printf(Locale.ROOT, "[%2d/%d] %s%n", ++done, total, line(r));
          }
        }
      }
    }
    output.finish(report(), this::writeCsv, this::writePng);
    return 0;
  }

  private Result run(ProcessRunner runner, String system, String heap, int delay, int n)
      throws Exception {
    ProcessRunner.Output out =
        runner.run(
            "small-heap-" + system + "-" + heap + "-" + delay + "us-" + n,
            heap,
            CLIENT_HEAP,
            List.of(
                "scenario-serve",
                "--scenario",
                "unary",
                "--system",
                system,
                "--port",
                ProcessRunner.PORT,
                "--delay-us",
                Integer.toString(delay),
                "--size",
                Integer.toString(size)),
            List.of(
                "small-heap-drive",
                "--system",
                system,
                "--port",
                ProcessRunner.PORT,
                "--clients",
                Integer.toString(n),
                "--size",
                Integer.toString(size),
                "--warmup",
                Integer.toString(warmup),
                "--duration",
                Integer.toString(duration)),
            warmup + duration + 60);
    return parse(system, heap, delay, n, out);
  }

  static Result parse(String system, String heap, int delay, int n, ProcessRunner.Output out) {
    if (out.failure() != null) {
      return new Result(system, heap, delay, n, 0, 1, null, 0, 0, 0, out.failure());
    }
    long calls = -1;
    double seconds = 1;
    Latency.Summary latency = null;
    long errors = 0;
    long clientGc = 0;
    long serverGc;
    long windowStart = 0;
    long windowEnd = 0;
    for (String line : out.client()) {
      String[] cells = line.split(" ");
      switch (cells[0]) {
        case "RESULT" -> {
          calls = Long.parseLong(cells[1]);
          seconds = Long.parseLong(cells[2]) / 1e9;
          latency = Latency.Summary.parse(cells, 3);
        }
        case "ERRORS" -> errors = Long.parseLong(cells[1]);
        case "WINDOW" -> {
          windowStart = Long.parseLong(cells[1]);
          windowEnd = Long.parseLong(cells[2]);
          clientGc = Long.parseLong(cells[3]);
        }
        default -> {}
      }
    }
    serverGc = Ticks.gcMillis(out.server(), windowStart, windowEnd);
    if (calls < 0) {
      return new Result(system, heap, delay, n, 0, 1, null, 0, 0, 0, "no result from the client");
    }
    return new Result(
        system, heap, delay, n, calls, seconds, latency, errors, clientGc, serverGc, null);
  }

  private static String line(Result r) {
    if (r.failure() != null) {
      return String.format(
          Locale.ROOT,
          "%-5s %5d us %5d clients %-10s FAILED: %s",
          r.heap(),
          r.delayMicros(),
          r.clients(),
          r.system(),
          r.failure());
    }
    Latency.Summary l = r.latency();
    return String.format(
        Locale.ROOT,
        "%-5s %5d us %5d clients %-10s %,10.0f calls/s  avg %9.1f us  p99 %9.1f us  +%8.1f us"
            + "  GC %5d/%5d ms%s",
        r.heap(),
        r.delayMicros(),
        r.clients(),
        r.system(),
        r.rate(),
        l.mean(),
        l.p99(),
        l.mean() - r.delayMicros(),
        r.serverGcMillis(),
        r.clientGcMillis(),
        r.errors() > 0 ? "  ERRORS " + r.errors() : "");
  }

  String report() {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "Unary calls with a blocking handler, %d-byte messages, closed-loop clients on one"
                + " connection; %d s measured after %d s.%n"
                + "heap  delay     clients system          calls/s  avg round trip  p99 round trip"
                + "  beyond the delay  GC ms server/client%n",
            size,
            duration,
            warmup));
    for (Result r : results) {
      out.append(line(r)).append('\n');
    }
    return out.toString();
  }

  private void writeCsv(File file) throws Exception {
    try (PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8)) {
      w.println(
          "system,heap,delay_us,clients,payload_bytes,calls_per_sec,avg_us,p50_us,p99_us,p999_us,"
              + "overhead_us,errors,gc_ms_server,gc_ms_client");
      for (Result r : results) {
        if (r.failure() != null) {
          continue;
        }
        Latency.Summary l = r.latency();
        w.printf(
            Locale.ROOT,
            "%s,%s,%d,%d,%d,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%d,%d%n",
            r.system(),
            r.heap(),
            r.delayMicros(),
            r.clients(),
            size,
            r.rate(),
            l.mean(),
            l.p50(),
            l.p99(),
            l.p999(),
            l.mean() - r.delayMicros(),
            r.errors(),
            r.serverGcMillis(),
            r.clientGcMillis());
      }
    }
  }

  private void writePng(File file) throws Exception {
    String heap = heaps.get(0);
    Map<String, Map<String, double[]>> groups = new LinkedHashMap<>();
    for (Result r : results) {
      if (r.failure() == null && r.heap().equals(heap)) {
        double k = r.rate() / 1e3;
        groups
            .computeIfAbsent(
                r.clients() + " clients\n" + r.delayMicros() + " us", g -> new LinkedHashMap<>())
            .put(r.system(), new double[] {k, k, k});
      }
    }
    Chart.bars(
        groups,
        systems,
        "Unary calls/s with a blocking handler at -Xmx" + heap + " (" + LocalDate.now() + ")",
        "k/s",
        "clients x handler delay",
        file);
  }
}
