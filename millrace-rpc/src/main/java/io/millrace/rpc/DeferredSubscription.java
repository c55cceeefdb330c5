package io.millrace.rpc;

import org.reactivestreams.Subscription;

/**
 * The subscription to a source that may arrive after demand or a cancel: demand is kept until it
 * arrives, and a cancel made before cancels it on arrival. Requests and cancels may come from any
 * thread; the lock is taken per request and per cancel, never per item.
 */
final class DeferredSubscription {
  private Subscription upstream;
  private long requested;
  private boolean cancelled;

  /** The source's subscription arrived. */
  void set(Subscription s) {
    long n;
    synchronized (this) {
      if (upstream != null || cancelled) {
        n = -1;
      } else {
        upstream = s;
        n = requested;
        requested = 0;
      }
    }
    if (n < 0) {
      s.cancel();
    } else if (n > 0) {
      s.request(n);
    }
  }

  void request(long n) {
    Subscription s;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      s = upstream;
      if (s == null) {
        long r = requested + n;
        requested = r < 0 ? Long.MAX_VALUE : r;
      }
    }
    if (s != null) {
      s.request(n);
    }
  }

  void cancel() {
    Subscription s;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      s = upstream;
    }
    if (s != null) {
      s.cancel();
    }
  }
}
