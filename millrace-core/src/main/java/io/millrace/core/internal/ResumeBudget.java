package io.millrace.core.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes every resumable session of one server holds in its replay store, against a bound for
 * the server as a whole. A session whose peer does not confirm what it sent is held back by its own
 * store's bound; this one keeps many sessions together, and the sessions waiting for their client
 * to come back, from taking more than the server allows: above it, attached sessions hold their
 * senders back and the longest-detached sessions are expired first (see {@link ResumeSessions}).
 * One atomic update per store entry (a batch of frames, or one large frame). Any thread.
 */
public final class ResumeBudget {
  private final long max;
  private final AtomicLong held = new AtomicLong();

  public ResumeBudget(long max) {
    if (max < 1) {
      throw new IllegalArgumentException("resume budget must be positive");
    }
    this.max = max;
  }

  public long max() {
    return max;
  }

  public long held() {
    return held.get();
  }

  boolean exhausted() {
    return held.get() >= max;
  }

  void add(long bytes) {
    held.addAndGet(bytes);
  }

  void release(long bytes) {
    held.addAndGet(-bytes);
  }
}
