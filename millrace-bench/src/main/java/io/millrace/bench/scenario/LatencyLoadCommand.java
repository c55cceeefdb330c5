package io.millrace.bench.scenario;

import io.millrace.bench.Chart;
import io.millrace.bench.ProcessRunner;
import io.millrace.bench.Systems;
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
 * {@code millrace bench latency-load}: request-response round trips against offered load, open
 * loop, for 1, 10 and 50 connections and 48- and 3,216-byte messages, Millrace against grpc-java
 * and rsocket-java. The load rises geometrically from {@code --start-rate} until the knee: the
 * first step whose answers fall below 90 % of the offered load or whose p99 passes 50 ms ends the
 * series. Each step says whether the generator kept its schedule, and if not which side queued (see
 * {@link io.millrace.bench.OpenLoop}); the summary gives the highest load each system holds with
 * p99 under 1 ms.
 */
@Command(
    name = "latency-load",
    mixinStandardHelpOptions = true,
    description = {
      "Round trip against offered load (open loop) up to the knee: Millrace, grpc-java,",
      "rsocket-java; 1, 10 and 50 connections; 48- and 3,216-byte messages."
    })
public final class LatencyLoadCommand implements Callable<Integer> {
  @Option(names = "--systems", split = ",", defaultValue = "millrace,grpc-java,rsocket-java")
  List<String> systems;

  @Option(names = "--connections", split = ",", defaultValue = "1,10,50")
  List<Integer> connections;

  @Option(names = "--sizes", split = ",", defaultValue = "48,3216")
  List<Integer> sizes;

  @Option(names = "--start-rate", defaultValue = "5000", description = "First step, calls/s.")
  long startRate;

  @Option(names = "--factor", defaultValue = "2", description = "Each step's load over the last.")
  double factor;

  @Option(names = "--max-steps", defaultValue = "14")
  int maxSteps;

  @Option(
      names = "--warmup",
      defaultValue = "10",
      description = {
        "Warm-up seconds per step: the first half closed loop at full speed (grpc-java's JIT",
        "needs seconds of it: warmed by a low step's load alone, it is still compiling, on the",
        "event loop's core, when the step is measured), the second at the step's load."
      })
  int warmup;

  @Option(names = "--duration", defaultValue = "3", description = "Measured seconds per step.")
  int duration;

  @Option(
      names = "--quick",
      description = "About 1.5 minutes: 1 connection, 48 bytes, steps x4 from 10,000/s.")
  boolean quick;

  @Option(
      names = "--client-jvm-opts",
      defaultValue = "-Xmn768m",
      description = {
        "Extra JVM options of the load generator, space separated. The default young generation",
        "keeps the generator's own collections (12-15 ms each on one core) out of most measured",
        "windows; the client GC time of each window is reported."
      })
  String clientJvmOpts;

  @Mixin ScenarioOutput output = new ScenarioOutput();

  /** The p99 a load must keep to count as held, in microseconds. */
  static final double HOLD_P99_MICROS = 1_000;

  /** One step of one series. */
  record Step(
      String system,
      int connections,
      int size,
      long offered,
      double achieved,
      Latency.Summary latency,
      long maxLagNanos,
      long cappedSends,
      double clientCpu,
      double serverCpu,
      long clientGcMillis,
      String failure) {

    /** The answers kept up with the load. */
    boolean keptUp() {
      return failure == null && achieved >= 0.9 * offered && latency.p99() <= 50_000;
    }

    boolean holds() {
      return failure == null && achieved >= 0.95 * offered && latency.p99() < HOLD_P99_MICROS;
    }

    /**
     * Whether the load was carried on schedule, and if not who fell behind: the generator sending
     * late (its loop also reads the answers), or sends held by the in-flight cap (answers late);
     * the busier of the two cores, each pinned process's CPU share of the measured window, says
     * which side queued.
     */
    String verdict() {
      if (failure != null) {
        return "failed";
      }
      String cores =
          String.format(
                  Locale.ROOT, "cpu client %.0f%% server %.0f%%", 100 * clientCpu, 100 * serverCpu)
              + (clientGcMillis > 0 ? "; client GC " + clientGcMillis + " ms" : "");
      boolean late = maxLagNanos > 1_000_000;
      if (cappedSends == 0 && !late) {
        return "on schedule; " + cores;
      }
      String what =
          cappedSends > 0
              ? "in-flight cap reached"
              : String.format(Locale.ROOT, "sends up to %.1f ms late", maxLagNanos / 1e6);
      String side =
          Math.max(clientCpu, serverCpu) < 0.9
              ? "neither core saturated"
              : serverCpu >= clientCpu ? "server saturated" : "client saturated";
      return what + ", " + side + "; " + cores;
    }
  }

  private final List<Step> steps = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    if (quick) {
      connections = List.of(1);
      sizes = List.of(48);
      startRate = 10_000;
      factor = 4;
      warmup = 4;
      duration = 2;
    }
    for (String s : systems) {
      Systems.byName(s); // fail fast on a typo
    }
    ProcessRunner runner =
        output.runner(
            List.of(),
            clientJvmOpts.isBlank() ? List.of() : List.of(clientJvmOpts.trim().split("\\s+")));
    for (int size : sizes) {
      for (int n : connections) {
        for (String system : systems) {
          long rate = startRate;
          for (int i = 0; i < maxSteps; i++) {
            Step step = run(runner, system, n, size, rate);
            steps.add(step);
            System.out.println(line(step));
            if (!step.keptUp()) {
              break;
            }
            rate = (long) (rate * factor);
          }
        }
      }
    }
    output.finish(report(), this::writeCsv, this::writePng);
    return 0;
  }

  private Step run(ProcessRunner runner, String system, int n, int size, long rate)
      throws Exception {
    ProcessRunner.Output out =
        runner.run(
            "latency-load-" + system + "-" + n + "c-" + size + "-" + rate,
            "1g",
            List.of(
                "serve",
                "--system",
                system,
                "--port",
                ProcessRunner.PORT,
                "--size",
                Integer.toString(size)),
            List.of(
                "latency-load-drive",
                "--system",
                system,
                "--port",
                ProcessRunner.PORT,
                "--size",
                Integer.toString(size),
                "--connections",
                Integer.toString(n),
                "--rate",
                Long.toString(rate),
                "--warmup",
                Integer.toString(warmup),
                "--duration",
                Integer.toString(duration)),
            warmup + duration + 60);
    if (out.failure() != null) {
      return new Step(system, n, size, rate, 0, null, 0, 0, 0, 0, 0, out.failure());
    }
    double achieved = -1;
    Latency.Summary latency = null;
    long lag = 0;
    long capped = 0;
    long failedCalls = 0;
    double clientCpu = 0;
    long clientGc = 0;
    long windowStart = 0;
    long windowEnd = 0;
    for (String line : out.client()) {
      String[] cells = line.split(" ");
      if (cells[0].equals("RESULT")) {
        achieved = Long.parseLong(cells[1]) / (Long.parseLong(cells[2]) / 1e9);
        latency = Latency.Summary.parse(cells, 3);
      } else if (cells[0].equals("GENERATOR")) {
        lag = Long.parseLong(cells[1]);
        capped = Long.parseLong(cells[2]);
        failedCalls = Long.parseLong(cells[4]);
      } else if (cells[0].equals("WINDOW")) {
        windowStart = Long.parseLong(cells[1]);
        windowEnd = Long.parseLong(cells[2]);
        clientCpu = Long.parseLong(cells[3]) / (double) Long.parseLong(cells[4]);
        clientGc = Long.parseLong(cells[5]);
      }
    }
    if (latency == null) {
      return new Step(system, n, size, rate, 0, null, 0, 0, 0, 0, 0, "no result from the client");
    }
    if (failedCalls > 0) {
      return new Step(system, n, size, rate, 0, null, 0, 0, 0, 0, 0, failedCalls + " calls failed");
    }
    double serverCpu = Ticks.cpuShare(out.server(), windowStart, windowEnd);
    return new Step(
        system, n, size, rate, achieved, latency, lag, capped, clientCpu, serverCpu, clientGc,
        null);
  }

  private static String line(Step s) {
    if (s.failure() != null) {
      return String.format(
          Locale.ROOT,
          "%-12s %2d conn %5d B %,10d/s FAILED: %s",
          s.system(),
          s.connections(),
          s.size(),
          s.offered(),
          s.failure());
    }
    Latency.Summary l = s.latency();
    return String.format(
        Locale.ROOT,
        "%-12s %2d conn %5d B %,10d/s offered %,11.0f/s answered  p50 %9.1f  avg %9.1f  p99 %9.1f"
            + "  p99.9 %9.1f us  %s",
        s.system(),
        s.connections(),
        s.size(),
        s.offered(),
        s.achieved(),
        l.p50(),
        l.mean(),
        l.p99(),
        l.p999(),
        s.verdict());
  }

  String report() {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "Request-response round trip against offered load (open loop, latency from each"
                + " request's intended send time); %d s measured after %d s per step.%n",
            duration,
            warmup));
    for (Step s : steps) {
      out.append(line(s)).append('\n');
    }
    out.append(
        String.format(
            Locale.ROOT,
            "%nHighest offered load held with p99 under %.0f us (and 95 %% of it answered)%n",
            HOLD_P99_MICROS));
    for (int size : sizes) {
      for (int n : connections) {
        for (String system : systems) {
          long best = 0;
          for (Step s : steps) {
            if (s.system().equals(system)
                && s.connections() == n
                && s.size() == size
                && s.holds()) {
              best = Math.max(best, s.offered());
            }
          }
          out.append(
              String.format(
                  Locale.ROOT,
                  "  %-12s %2d conn %5d B  %s%n",
                  system,
                  n,
                  size,
                  best == 0 ? "none of the steps" : String.format(Locale.ROOT, "%,d/s", best)));
        }
      }
    }
    return out.toString();
  }

  private void writeCsv(File file) throws Exception {
    try (PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8)) {
      w.println(
          "system,connections,payload_bytes,offered_per_sec,answered_per_sec,p50_us,avg_us,p99_us,"
              + "p999_us,max_us,generator_max_lag_us,capped_sends,client_cpu,server_cpu,verdict");
      for (Step s : steps) {
        if (s.failure() != null) {
          continue;
        }
        Latency.Summary l = s.latency();
        w.printf(
            Locale.ROOT,
            "%s,%d,%d,%d,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%.2f,%.2f,\"%s\"%n",
            s.system(),
            s.connections(),
            s.size(),
            s.offered(),
            s.achieved(),
            l.p50(),
            l.mean(),
            l.p99(),
            l.p999(),
            l.max(),
            s.maxLagNanos() / 1e3,
            s.cappedSends(),
            s.clientCpu(),
            s.serverCpu(),
            s.verdict());
      }
    }
  }

  private void writePng(File file) throws Exception {
    int size = sizes.get(0);
    Map<String, List<double[]>> series = new LinkedHashMap<>();
    for (Step s : steps) {
      if (s.failure() == null && s.size() == size) {
        series
            .computeIfAbsent(s.system() + " " + s.connections() + "c", k -> new ArrayList<>())
            .add(new double[] {s.offered(), s.latency().p99()});
      }
    }
    Chart.lines(
        series,
        "p99 round trip against offered load, " + size + "-byte messages (" + LocalDate.now() + ")",
        "offered calls/s",
        "us",
        "open loop; each series ends at its knee",
        file);
  }
}
