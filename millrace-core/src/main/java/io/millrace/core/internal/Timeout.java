package io.millrace.core.internal;

/**
 * A task to run at a deadline on an event loop, scheduled with {@link Timers}. The object is its
 * own list node, so scheduling and rescheduling allocate nothing: a connection keeps one per timer
 * it needs for its whole life. Event loop only.
 */
abstract class Timeout {
  long deadlineNanos;
  Timeout prev;
  Timeout next;
  int slot = -1;

  /** Whether it is scheduled now. */
  final boolean isScheduled() {
    return slot >= 0;
  }

  /** Runs at (or soon after) the deadline, on the loop; may reschedule itself. */
  abstract void expire(long nowNanos);
}
