package io.millrace.core.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Timers whose clock moves only when a test says so: timing behaviour (keepalive, timeouts, lease
 * expiry) is tested without sleeping and without flakiness. Use on the engine's loop.
 */
final class ManualTimers implements Timers {
  private long now = 1_000_000_000L;
  private final List<Timeout> scheduled = new ArrayList<>();

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public void schedule(Timeout timeout, long deadlineNanos) {
    cancel(timeout);
    timeout.deadlineNanos = deadlineNanos;
    timeout.slot = 0;
    scheduled.add(timeout);
  }

  @Override
  public void cancel(Timeout timeout) {
    if (scheduled.remove(timeout)) {
      timeout.slot = -1;
    }
  }

  /** Moves the clock forward, running every timeout that falls due, in deadline order. */
  void advance(Duration by) {
    long target = now + by.toNanos();
    while (true) {
      Timeout next =
          scheduled.stream()
              .filter(t -> t.deadlineNanos - target <= 0)
              .min(Comparator.comparingLong(t -> t.deadlineNanos))
              .orElse(null);
      if (next == null) {
        break;
      }
      now = Math.max(now, next.deadlineNanos);
      cancel(next);
      next.expire(now);
    }
    now = target;
  }

  int scheduledCount() {
    return scheduled.size();
  }
}
