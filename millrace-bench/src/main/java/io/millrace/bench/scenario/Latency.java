package io.millrace.bench.scenario;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** Round trips recorded in nanoseconds, printed and parsed as one line of microseconds. */
final class Latency {
  private Latency() {}

  static Histogram histogram() {
    return new Histogram(java.util.concurrent.TimeUnit.SECONDS.toNanos(60), 3);
  }

  /** {@code count mean p50 p90 p99 p99.9 max}, in microseconds after the count. */
  static String line(Histogram h) {
    return String.format(
        Locale.ROOT,
        "%d %.1f %.1f %.1f %.1f %.1f %.1f",
        h.getTotalCount(),
        h.getMean() / 1e3,
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(90) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getValueAtPercentile(99.9) / 1e3,
        h.getMaxValue() / 1e3);
  }

  /** A {@link #line} read back: count, then mean, p50, p90, p99, p99.9, max in microseconds. */
  record Summary(
      long count, double mean, double p50, double p90, double p99, double p999, double max) {
    static Summary parse(String[] cells, int from) {
      return new Summary(
          Long.parseLong(cells[from]),
          Double.parseDouble(cells[from + 1]),
          Double.parseDouble(cells[from + 2]),
          Double.parseDouble(cells[from + 3]),
          Double.parseDouble(cells[from + 4]),
          Double.parseDouble(cells[from + 5]),
          Double.parseDouble(cells[from + 6]));
    }
  }

  /** {@code GC <collections> <milliseconds>} of this JVM so far. */
  static String gcLine() {
    long count = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
    }
    return "GC " + count + " " + gcMillis();
  }

  /** Milliseconds this JVM has spent collecting garbage so far. */
  static long gcMillis() {
    return io.millrace.bench.Systems.gcMillis();
  }
}
