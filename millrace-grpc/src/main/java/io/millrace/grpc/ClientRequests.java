package io.millrace.grpc;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * What a gRPC client call sends ({@code sendMessage}, {@code halfClose}) as the Publisher of
 * requests a Millrace streaming call reads. The Millrace call's demand (the server's credit) is
 * what {@link #isReady} reports; a caller that sends while not ready is buffered here, as
 * grpc-java's own transport buffers it, so callers that want bounded memory wait for onReady, as
 * with gRPC.
 */
final class ClientRequests<Req> implements Publisher<Req>, Subscription {
  private final Runnable onReady;
  private final ArrayDeque<Req> queue = new ArrayDeque<>(); // guarded by this
  private final AtomicInteger wip = new AtomicInteger();
  private Subscriber<? super Req> subscriber; // guarded by this
  private long demand; // guarded by this
  private boolean complete; // guarded by this
  private Throwable error; // guarded by this
  private boolean cancelled; // guarded by this
  private boolean terminated; // the drain loop only
  private boolean subscribed; // guarded by this

  /** {@code onReady} runs when the call becomes ready to send after it was not. */
  ClientRequests(Runnable onReady) {
    this.onReady = onReady;
  }

  @Override
  public void subscribe(Subscriber<? super Req> s) {
    boolean first;
    synchronized (this) {
      first = subscriber == null;
      if (first) {
        subscriber = s;
      }
    }
    if (!first) {
      NoSubscription.refuseSecond(s, "the requests of a call");
      return;
    }
    s.onSubscribe(this);
    synchronized (this) {
      subscribed = true; // onSubscribe returned: signals may go out
    }
    drain();
  }

  /** Whether a message sent now goes out without waiting for credit. */
  synchronized boolean isReady() {
    return !cancelled && !complete && demand > queue.size();
  }

  void send(Req message) {
    synchronized (this) {
      if (cancelled || complete) {
        return;
      }
      queue.add(message);
    }
    drain();
  }

  void halfClose() {
    synchronized (this) {
      complete = true;
    }
    drain();
  }

  /** The call failed or was cancelled: the Millrace call's requests end with {@code why}. */
  void fail(Throwable why) {
    synchronized (this) {
      if (complete) {
        return;
      }
      complete = true;
      error = why;
      queue.clear();
    }
    drain();
  }

  @Override
  public void request(long n) {
    boolean becameReady;
    synchronized (this) {
      if (n <= 0) {
        cancelled = true;
        error = new IllegalArgumentException("rule 3.9: request(" + n + ")");
        complete = true;
        queue.clear();
        becameReady = false;
      } else {
        boolean wasReady = demand > queue.size();
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        becameReady = !wasReady && demand > queue.size() && !complete;
      }
    }
    drain();
    if (becameReady) {
      onReady.run();
    }
  }

  @Override
  public void cancel() {
    synchronized (this) {
      cancelled = true;
      queue.clear();
      subscriber = NoSubscription.CANCELLED; // rule 3.13 (still non-null: a second is refused)
    }
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      for (; ; ) {
        Subscriber<? super Req> s;
        Req next = null;
        boolean end = false;
        Throwable failure = null;
        synchronized (this) {
          s = subscriber;
          if (!subscribed || terminated || (cancelled && error == null)) {
            break;
          }
          if (error != null) {
            end = true;
            failure = error;
          } else if (demand > 0 && !queue.isEmpty()) {
            next = queue.poll();
            if (demand != Long.MAX_VALUE) {
              demand--;
            }
          } else if (complete && queue.isEmpty()) {
            end = true;
          } else {
            break;
          }
          if (end) {
            terminated = true;
          }
        }
        if (next != null) {
          s.onNext(next);
        } else if (failure != null) {
          s.onError(failure);
        } else {
          s.onComplete();
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }
}
