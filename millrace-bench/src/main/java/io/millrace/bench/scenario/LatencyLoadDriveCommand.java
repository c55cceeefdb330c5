package io.millrace.bench.scenario;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.OpenLoop;
import io.millrace.bench.Systems;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of one latency-load step: {@code connections} connections (each the system's
 * client with its own event loop, all on this process's core), open-loop request-response at {@code
 * rate} a second in all, split evenly. It warms up for {@code warmup} seconds, the first half
 * closed loop as fast as the system answers (the JIT), the second at the step's load, then measures
 * for {@code duration} seconds, then waits (at most 5 s) for the requests of the window still
 * unanswered, and prints {@code RESULT <answered in the window> <nanoseconds> <latency line>},
 * {@code GENERATOR <max lag ns> <capped sends> <1 if answers were still missing> <failed calls>}
 * (how late the generator sent, how often the in-flight cap held it, see {@link OpenLoop}, and how
 * many calls failed instead of being answered) and {@code WINDOW <start millis> <end millis>
 * <process CPU ns> <nanoseconds> <GC ms>}, the window and the CPU and collection time this process
 * spent in it.
 */
@Command(
    name = "latency-load-drive",
    hidden = true,
    description = "Client process of one latency-load step.")
public final class LatencyLoadDriveCommand implements Callable<Integer> {
  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--size", required = true)
  int size;

  @Option(names = "--connections", defaultValue = "1")
  int connections;

  @Option(names = "--rate", required = true)
  long rate;

  @Option(names = "--warmup", defaultValue = "2")
  int warmup;

  @Option(names = "--duration", defaultValue = "3")
  int duration;

  @Override
  public Integer call() throws Exception {
    BenchSystem s = Systems.byName(system);
    List<BenchClient> clients = new ArrayList<>();
    List<OpenLoop> loads = new ArrayList<>();
    Recorder latency = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
    LongAdder answered = new LongAdder();
    try {
      for (int i = 0; i < connections; i++) {
        clients.add(s.connect(port, size));
      }
      long each = Math.max(1, rate / connections);
      // Warm up closed loop first, as fast as each connection answers 16 requests in flight: a
      // JIT warmed only by a low step's load is still compiling when the step is measured, and
      // on the one pinned core the compiler takes the event loop's time (grpc-java at 5,000/s:
      // both cores busy, mostly in C2). Then the step's own load, before it is measured.
      AtomicBoolean warming = new AtomicBoolean(true);
      for (BenchClient c : clients) {
        Runnable again =
            new Runnable() {
              @Override
              public void run() {
                if (warming.get()) {
                  c.requestResponse(this);
                }
              }
            };
        c.eventLoop()
            .execute(
                () -> {
                  for (int i = 0; i < 16; i++) {
                    c.requestResponse(again);
                  }
                });
      }
      Thread.sleep(TimeUnit.SECONDS.toMillis(warmup) / 2);
      warming.set(false);
      for (BenchClient c : clients) {
        OpenLoop load = new OpenLoop(c, each, latency, answered);
        loads.add(load);
        load.start();
      }
      Thread.sleep(TimeUnit.SECONDS.toMillis(warmup) - TimeUnit.SECONDS.toMillis(warmup) / 2);
      latency.reset();
      loads.forEach(OpenLoop::resetCounters);
      long before = answered.sum();
      long startMillis = System.currentTimeMillis();
      long cpuBefore = Systems.processCpuNanos();
      long gcBefore = Latency.gcMillis();
      long start = System.nanoTime();
      Thread.sleep(TimeUnit.SECONDS.toMillis(duration));
      long elapsed = System.nanoTime() - start;
      long cpu = Systems.processCpuNanos() - cpuBefore;
      long gc = Latency.gcMillis() - gcBefore;
      long count = answered.sum() - before;
      // Requests due in the window and not yet answered are part of it: those never sent are
      // recorded as late as they are now, those in flight when they answer (or at the timeout).
      loads.forEach(OpenLoop::stop);
      boolean drained = true;
      for (OpenLoop load : loads) {
        drained &= load.awaitAnswers(5_000);
      }
      Histogram h = latency.getIntervalHistogram();
      long lag = 0;
      long capped = 0;
      long failed = 0;
      for (OpenLoop load : loads) {
        lag = Math.max(lag, load.maxLagNanos());
        capped += load.cappedSends();
        failed += load.failedCalls();
      }
      System.out.println("RESULT " + count + " " + elapsed + " " + Latency.line(h));
      System.out.println(
          "GENERATOR " + lag + " " + capped + " " + (drained ? 0 : 1) + " " + failed);
      System.out.println(
          "WINDOW "
              + startMillis
              + " "
              + System.currentTimeMillis()
              + " "
              + cpu
              + " "
              + elapsed
              + " "
              + gc);
    } finally {
      for (BenchClient c : clients) {
        c.close();
      }
    }
    return 0;
  }
}
