package io.millrace.grpc;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscription;

/**
 * A Subscription that may arrive late and is called from one thread at a time (rule 2.7), whoever
 * asks: demand and a cancel made before it arrives, or while another thread is calling it, are
 * passed on by the thread already inside. No lock is held while the upstream runs, so an upstream
 * that emits under its own lock cannot deadlock with a caller here.
 */
final class SerialSubscription implements Subscription {
  private final AtomicLong pending = new AtomicLong();
  private final AtomicInteger wip = new AtomicInteger();
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
      p = pending.get();
      next = p + n < 0 ? Long.MAX_VALUE : p + n;
    } while (!pending.compareAndSet(p, next));
    drain();
  }

  @Override
  public void cancel() {
    cancelled = true;
    drain();
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
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
          long n = pending.getAndSet(0);
          if (n > 0) {
            s.request(n);
          }
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }
}
