package io.millrace.core;

import java.time.Duration;
import java.util.Objects;

/** The argument checks that {@link Resumption} and {@link Reconnect} share for their backoff. */
final class BackoffChecks {
  private BackoffChecks() {}

  static void range(Duration min, Duration max) {
    Objects.requireNonNull(min);
    Objects.requireNonNull(max);
    if (min.isNegative() || max.compareTo(min) < 0) {
      throw new IllegalArgumentException("backoff needs 0 <= min <= max");
    }
  }

  static void jitter(double jitter) {
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new IllegalArgumentException("jitter must be within [0, 1]");
    }
  }
}
