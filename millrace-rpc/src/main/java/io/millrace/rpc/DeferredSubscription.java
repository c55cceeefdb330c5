package io.millrace.rpc;

import org.reactivestreams.Subscription;

/**
 * The subscription to a source that may arrive after demand or a cancel: demand is kept until it
 * arrives, and a cancel made before cancels it on arrival. Requests and cancels may come from any
 * thread; the lock is taken per request and per cancel, never per item.
 *
 * <p>The source's subscription is called by one thread at a time (Reactive Streams rule 2.7): the
 * thread that finds no other one calling it passes on all the demand made meanwhile, and a cancel
 * made while it does so is passed on by it, after its request.
 */
final class DeferredSubscription {
  private Subscription upstream;
  private long requested;
  private boolean cancelled;

  /** Whether a thread is calling {@link #upstream} (guarded by this). */
  private boolean calling;

  /** The source's subscription arrived. */
  void set(Subscription s) {
    long n;
    synchronized (this) {
      if (upstream != null || cancelled) {
        n = -1;
      } else {
        upstream = s;
        calling = true;
        n = requested;
        requested = 0;
      }
    }
    if (n < 0) {
      s.cancel(); // (never stored: no other thread calls it)
      return;
    }
    passOn(s, n);
  }

  void request(long n) {
    Subscription s;
    long all;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      long r = requested + n;
      requested = r < 0 ? Long.MAX_VALUE : r;
      if (upstream == null || calling) {
        return; // kept for set(), or passed on by the thread calling upstream
      }
      calling = true;
      s = upstream;
      all = requested;
      requested = 0;
    }
    passOn(s, all);
  }

  void cancel() {
    Subscription s;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      if (calling) {
        return; // the thread calling upstream cancels it after its request
      }
      s = upstream;
    }
    if (s != null) {
      s.cancel();
    }
  }

  /**
   * As the calling thread: passes on {@code n}, then the demand and a cancel made meanwhile (one
   * lock per round; the first round's demand was taken with the caller's lock).
   */
  private void passOn(Subscription s, long n) {
    while (true) {
      if (n > 0) {
        s.request(n);
      }
      synchronized (this) {
        if (cancelled) {
          calling = false;
          break;
        }
        n = requested;
        requested = 0;
        if (n == 0) {
          calling = false;
          return;
        }
      }
    }
    s.cancel();
  }
}
