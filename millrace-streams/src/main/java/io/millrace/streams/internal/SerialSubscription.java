package io.millrace.streams.internal;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;

/**
 * The subscription to a source that may arrive late, called from one thread at a time (Reactive
 * Streams rule 2.7) whoever asks: demand and a cancel made before it arrives, or while another
 * thread is calling it, are passed on by the thread already inside, the cancel after its request.
 * Lock-free, and no lock is held while the source runs, so a source that emits under its own lock
 * cannot deadlock with a caller here. One object per use: the counters are field updaters.
 */
public final class SerialSubscription implements Subscription {
  private static final AtomicLongFieldUpdater<SerialSubscription> PENDING =
      AtomicLongFieldUpdater.newUpdater(SerialSubscription.class, "pending");
  private static final AtomicIntegerFieldUpdater<SerialSubscription> WIP =
      AtomicIntegerFieldUpdater.newUpdater(SerialSubscription.class, "wip");
  private static final AtomicReferenceFieldUpdater<SerialSubscription, Subscription> UPSTREAM =
      AtomicReferenceFieldUpdater.newUpdater(
          SerialSubscription.class, Subscription.class, "upstream");

  // Field updaters, not atomic objects: one of these per call, and nothing else.
  private volatile long pending;
  private volatile int wip;
  private volatile Subscription upstream;
  private volatile boolean cancelled;
  private boolean cancelSent; // the draining thread's

  /**
   * The thread inside the upstream's {@code request}, while it is: read by {@link #cancel}, which
   * compares it with its own thread only, so a plain field does (a thread sees its own writes in
   * order, and another's write never names it).
   */
  private Thread requesting;

  /**
   * The upstream arrived: what was asked meanwhile goes to it, or the cancel made meanwhile. A
   * second one (a source breaking rule 2.5) is cancelled at once.
   */
  public void set(Subscription s) {
    if (!UPSTREAM.compareAndSet(this, null, s)) {
      s.cancel();
      return;
    }
    drain();
  }

  /** Adds {@code n} (positive: callers check rule 3.9 themselves) to the demand passed on. */
  @Override
  public void request(long n) {
    if (n <= 0) {
      return;
    }
    long p;
    long next;
    do {
      p = pending;
      next = p + n < 0 ? Long.MAX_VALUE : p + n;
    } while (!PENDING.compareAndSet(this, p, next));
    drain();
  }

  /**
   * Passed on now when called from within the source's own {@code request} (its subscriber
   * cancelling in onNext, rule 3.3): a source that emits synchronously inside {@code request}, such
   * as a range, would otherwise go on emitting all that was asked before it heard of the cancel.
   * From any other thread, passed on by the thread inside, after its request.
   */
  @Override
  public void cancel() {
    cancelled = true;
    if (requesting == Thread.currentThread()) {
      if (!cancelSent) {
        cancelSent = true;
        upstream.cancel();
      }
      return;
    }
    drain();
  }

  private void drain() {
    if (WIP.getAndIncrement(this) != 0) {
      return;
    }
    int missed = 1;
    do {
      Subscription s = upstream;
      if (s != null && !cancelSent) {
        if (cancelled) {
          cancelSent = true;
          s.cancel();
        } else {
          long n = PENDING.getAndSet(this, 0);
          if (n > 0) {
            requesting = Thread.currentThread();
            try {
              s.request(n);
            } finally {
              requesting = null;
            }
          }
        }
      }
      missed = WIP.addAndGet(this, -missed);
    } while (missed != 0);
  }
}
