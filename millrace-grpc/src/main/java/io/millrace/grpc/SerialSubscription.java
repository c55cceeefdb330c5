package io.millrace.grpc;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;

/**
 * A Subscription that may arrive late and is called from one thread at a time (rule 2.7), whoever
 * asks: demand and a cancel made before it arrives, or while another thread is calling it, are
 * passed on by the thread already inside. No lock is held while the upstream runs, so an upstream
 * that emits under its own lock cannot deadlock with a caller here.
 */
final class SerialSubscription implements Subscription {
  private static final AtomicLongFieldUpdater<SerialSubscription> PENDING =
      AtomicLongFieldUpdater.newUpdater(SerialSubscription.class, "pending");
  private static final AtomicIntegerFieldUpdater<SerialSubscription> WIP =
      AtomicIntegerFieldUpdater.newUpdater(SerialSubscription.class, "wip");

  // Field updaters, not atomic objects: one of these per call, and nothing else.
  private volatile long pending;
  private volatile int wip;
  private volatile Subscription upstream;
  private volatile boolean cancelled;
  private boolean cancelSent; // the draining thread's

  /** The upstream arrived: what was asked meanwhile goes to it. */
  void set(Subscription s) {
    upstream = s;
    drain();
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      return; // callers here ask for positive amounts only
    }
    long p;
    long next;
    do {
      p = pending;
      next = p + n < 0 ? Long.MAX_VALUE : p + n;
    } while (!PENDING.compareAndSet(this, p, next));
    drain();
  }

  @Override
  public void cancel() {
    cancelled = true;
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
            s.request(n);
          }
        }
      }
      missed = WIP.addAndGet(this, -missed);
    } while (missed != 0);
  }
}
