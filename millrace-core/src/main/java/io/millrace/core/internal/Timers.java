package io.millrace.core.internal;

/**
 * Time and timers for the connections of one event loop. Production code uses {@link TimerWheel}
 * (one per loop, shared by all its connections); tests drive time by hand.
 */
interface Timers {

  /** The current time, in {@link System#nanoTime()} units. */
  long nanoTime();

  /** Schedules {@code timeout} at {@code deadlineNanos}, moving it if already scheduled. */
  void schedule(Timeout timeout, long deadlineNanos);

  /** Unschedules {@code timeout} if it is scheduled. */
  void cancel(Timeout timeout);
}
