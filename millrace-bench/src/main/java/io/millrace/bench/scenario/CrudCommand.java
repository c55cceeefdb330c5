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
 * {@code millrace bench crud}: the chat service driven by one client with synchronous calls, as the
 * REST/gRPC/RSocket comparisons do it: {@code --ops} creates, then as many updates, finds and
 * removes, on Millrace RPC, grpc-java and REST/JSON (the JDK's HttpClient against the JDK's HTTP
 * server), each in its own server and client JVM pinned to separate cores. Prints the total time
 * and each operation's latency percentiles; writes a CSV and a PNG on request.
 */
@Command(
    name = "crud",
    mixinStandardHelpOptions = true,
    description = {
      "CRUD on the chat service from one synchronous client: Millrace RPC, grpc-java, REST/JSON.",
      "Each system in its own server and client JVM, pinned to separate cores."
    })
public final class CrudCommand implements Callable<Integer> {
  @Option(names = "--systems", split = ",", defaultValue = "millrace,grpc-java,rest")
  List<String> systems;

  @Option(names = "--ops", defaultValue = "25000", description = "Calls of each operation.")
  int ops;

  @Option(names = "--warmup-ops", defaultValue = "5000", description = "Warm-up calls of each.")
  int warmupOps;

  @Option(names = "--heap", defaultValue = "256m", description = "Heap of both processes.")
  String heap;

  @Option(names = "--quick", description = "About a minute: 5,000 of each, 1,000 warm-up.")
  boolean quick;

  @Mixin ScenarioOutput output = new ScenarioOutput();

  /** One system's run: per operation its latency summary, and the measured phases' total. */
  record Result(
      String system, Map<String, Latency.Summary> operations, long totalNanos, String failure) {}

  private final List<Result> results = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    if (quick) {
      ops = 5_000;
      warmupOps = 1_000;
    }
    for (String s : systems) {
      if (!CrudSystems.NAMES.contains(s)) {
        throw new IllegalArgumentException("unknown system " + s + ": " + CrudSystems.NAMES);
      }
    }
    ProcessRunner runner = output.runner();
    for (String system : systems) {
      ProcessRunner.Output out =
          runner.run(
              "crud-" + system,
              heap,
              List.of(
                  "scenario-serve",
                  "--scenario",
                  "crud",
                  "--system",
                  system,
                  "--port",
                  ProcessRunner.PORT),
              List.of(
                  "crud-drive",
                  "--system",
                  system,
                  "--port",
                  ProcessRunner.PORT,
                  "--ops",
                  Integer.toString(ops),
                  "--warmup-ops",
                  Integer.toString(warmupOps)),
              600);
      Result r = parse(system, out);
      results.add(r);
      System.out.println(r.failure() == null ? line(r) : system + " FAILED: " + r.failure());
    }
    output.finish(report(), this::writeCsv, this::writePng);
    return 0;
  }

  static Result parse(String system, ProcessRunner.Output out) {
    if (out.failure() != null) {
      return new Result(system, Map.of(), 0, out.failure());
    }
    Map<String, Latency.Summary> operations = new LinkedHashMap<>();
    long total = -1;
    for (String line : out.client()) {
      String[] cells = line.split(" ");
      if (cells[0].equals("OP")) {
        operations.put(cells[1], Latency.Summary.parse(cells, 2));
      } else if (cells[0].equals("TOTAL")) {
        total = Long.parseLong(cells[1]);
      }
    }
    if (total < 0 || operations.size() != CrudDriveCommand.OPERATIONS.length) {
      return new Result(system, Map.of(), 0, "the client printed no result");
    }
    return new Result(system, operations, total, null);
  }

  private String line(Result r) {
    long calls = r.operations().values().stream().mapToLong(Latency.Summary::count).sum();
    return String.format(
        Locale.ROOT,
        "%-10s %,d calls in %.2f s: %,.0f calls/s",
        r.system(),
        calls,
        r.totalNanos() / 1e9,
        calls / (r.totalNanos() / 1e9));
  }

  String report() {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "CRUD on the chat service: %,d of each operation from one synchronous client, after %,d"
                + " of each to warm up (heap %s)%n",
            ops,
            warmupOps,
            heap));
    out.append(
        String.format(
            Locale.ROOT,
            "%-10s %9s %10s  %-26s%n",
            "system",
            "total s",
            "calls/s",
            "per operation: p50 / p99 / p99.9 us"));
    for (Result r : results) {
      if (r.failure() != null) {
        out.append(String.format(Locale.ROOT, "%-10s FAILED: %s%n", r.system(), r.failure()));
        continue;
      }
      long calls = r.operations().values().stream().mapToLong(Latency.Summary::count).sum();
      out.append(
          String.format(
              Locale.ROOT,
              "%-10s %9.2f %,10.0f ",
              r.system(),
              r.totalNanos() / 1e9,
              calls / (r.totalNanos() / 1e9)));
      for (Map.Entry<String, Latency.Summary> op : r.operations().entrySet()) {
        Latency.Summary l = op.getValue();
        out.append(
            String.format(
                Locale.ROOT, " %s %.0f/%.0f/%.0f", op.getKey(), l.p50(), l.p99(), l.p999()));
      }
      out.append('\n');
    }
    return out.toString();
  }

  private void writeCsv(File file) throws Exception {
    try (PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8)) {
      w.println(
          "system,operation,calls,total_seconds_all_operations,mean_us,p50_us,p90_us,p99_us,"
              + "p999_us,max_us");
      for (Result r : results) {
        for (Map.Entry<String, Latency.Summary> op : r.operations().entrySet()) {
          Latency.Summary l = op.getValue();
          w.printf(
              Locale.ROOT,
              "%s,%s,%d,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f%n",
              r.system(),
              op.getKey(),
              l.count(),
              r.totalNanos() / 1e9,
              l.mean(),
              l.p50(),
              l.p90(),
              l.p99(),
              l.p999(),
              l.max());
        }
      }
    }
  }

  private void writePng(File file) throws Exception {
    Map<String, Map<String, double[]>> groups = new LinkedHashMap<>();
    for (String op : CrudDriveCommand.OPERATIONS) {
      Map<String, double[]> bars = new LinkedHashMap<>();
      for (Result r : results) {
        Latency.Summary l = r.operations().get(op);
        if (l != null) {
          bars.put(r.system(), new double[] {l.p50(), l.p50(), l.p99()});
        }
      }
      groups.put(op, bars);
    }
    Chart.bars(
        groups,
        systems,
        "CRUD round trip, one synchronous client (" + LocalDate.now() + ")",
        "us",
        "bar: median; line: median to p99",
        file);
  }
}
