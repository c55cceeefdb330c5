package io.millrace.core.internal;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Reconnect delays: the first attempt at once, then {@code min} doubling up to {@code max}, each
 * drawn uniformly from {@code [d * (1 - jitter), d]} so that clients cut off together do not come
 * back together.
 */
final class Backoff {
  private final long minNanos;
  private final long maxNanos;
  private final double jitter;

  Backoff(Duration min, Duration max, double jitter) {
    this.minNanos = min.toNanos();
    this.maxNanos = max.toNanos();
    this.jitter = jitter;
  }

  /** The delay before attempt {@code attempt} (0-based). */
  long delayNanos(int attempt) {
    if (attempt == 0) {
      return 0;
    }
    long d = minNanos << Math.min(attempt - 1, 30);
    if (d <= 0 || d > maxNanos) {
      d = maxNanos;
    }
    return (long) (d * (1 - jitter * ThreadLocalRandom.current().nextDouble()));
  }
}
