package io.millrace.bench.scenario;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of the small-heap scenario: {@code clients} closed loops on one connection,
 * each one call at a time. After the warm-up it counts the calls that end within the measured
 * seconds and records their round trips; then it stops issuing, waits for the calls in flight, and
 * prints {@code RESULT <calls> <nanoseconds> <latency line>}, {@code ERRORS <n>} and {@code WINDOW
 * <start millis> <end millis> <GC ms>}: the measured window and this process's GC time in it. A
 * loop whose call fails counts the failure and goes on; after 1,000 failures in all, every loop
 * stops.
 */
@Command(
    name = "small-heap-drive",
    hidden = true,
    description = "Client process of the small-heap scenario.")
public final class SmallHeapDriveCommand implements Callable<Integer> {
  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--clients", required = true)
  int clients;

  @Option(names = "--size", defaultValue = "128")
  int size;

  @Option(names = "--warmup", defaultValue = "3")
  int warmup;

  @Option(names = "--duration", defaultValue = "5")
  int duration;

  private final Recorder recorder = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
  private final AtomicLong completed = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicInteger loops = new AtomicInteger();
  private volatile boolean measuring;
  private volatile boolean running = true;

  @Override
  public Integer call() throws Exception {
    try (UnarySystems.Caller caller = UnarySystems.connect(system, port, size)) {
      loops.set(clients);
      for (int i = 0; i < clients; i++) {
        issue(caller);
      }
      Thread.sleep(TimeUnit.SECONDS.toMillis(warmup));
      recorder.reset();
      completed.set(0);
      long startMillis = System.currentTimeMillis();
      long gcBefore = Latency.gcMillis();
      measuring = true;
      long start = System.nanoTime();
      Thread.sleep(TimeUnit.SECONDS.toMillis(duration));
      measuring = false;
      long elapsed = System.nanoTime() - start;
      long gc = Latency.gcMillis() - gcBefore;
      long endMillis = System.currentTimeMillis();
      Histogram latency = recorder.getIntervalHistogram();
      long calls = completed.get();
      running = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (loops.get() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      System.out.println("RESULT " + calls + " " + elapsed + " " + Latency.line(latency));
      System.out.println("ERRORS " + failures.get());
      System.out.println("WINDOW " + startMillis + " " + endMillis + " " + gc);
    }
    return 0;
  }

  /** One loop's next call, or its end. */
  private void issue(UnarySystems.Caller caller) {
    if (!running || failures.get() >= 1_000) {
      loops.decrementAndGet();
      return;
    }
    long start = System.nanoTime();
    caller.call(
        () -> {
          if (measuring) {
            recorder.recordValue(System.nanoTime() - start);
            completed.incrementAndGet();
          }
          issue(caller);
        },
        error -> {
          failures.incrementAndGet();
          issue(caller);
        });
  }
}
