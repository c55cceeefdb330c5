package io.millrace.grpc;

import io.grpc.ServerCall;
import io.millrace.rpc.Status;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A gRPC client's stream of requests as the Publisher a Millrace streaming handler reads: the
 * handler's demand becomes {@link ServerCall#request}, so gRPC delivers no message nobody asked for
 * and HTTP/2 flow control holds the client back; nothing is queued here.
 *
 * <p>One subscriber. gRPC's listener callbacks (one at a time) deliver the messages; the end of the
 * stream or its cancellation may come before the handler subscribes, and is then delivered when it
 * does.
 */
final class RequestPublisher<Req> implements Publisher<Req>, Subscription {
  /**
   * At most this many messages are asked of gRPC ahead of delivery: a handler that asks for
   * everything does not let gRPC read (and, should it cancel, drop) more than a window.
   */
  private static final long MAX_GRANTED = 256;

  private final ServerCall<Req, ?> call;

  private Subscriber<? super Req> subscriber; // guarded by this
  private long demand; // asked by the subscriber, not yet passed to gRPC; guarded by this
  private long granted; // passed to gRPC, not yet delivered; guarded by this
  private boolean cancelled; // guarded by this
  private boolean ended; // onComplete or onError was delivered or is due; guarded by this
  private Throwable endError; // the end that waits for a subscriber; guarded by this
  private boolean endPending; // guarded by this
  private boolean subscribed; // onSubscribe returned; guarded by this
  private boolean emitting; // onNext is running: an end from another thread waits; guarded by this

  RequestPublisher(ServerCall<Req, ?> call) {
    this.call = call;
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
    Throwable error;
    int grant;
    synchronized (this) {
      subscribed = true; // onSubscribe returned: messages and the end may go out
      grant = cancelled || ended ? 0 : takeGrant();
    }
    if (grant > 0) {
      call.request(grant); // what was asked inside onSubscribe
    }
    synchronized (this) {
      if (!endPending || cancelled) {
        return;
      }
      endPending = false;
      error = endError;
      endError = null;
    }
    deliverEnd(s, error);
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      end(new IllegalArgumentException("rule 3.9: request(" + n + ")")); // no grants after
      return;
    }
    int grant;
    synchronized (this) {
      if (cancelled || ended) {
        return;
      }
      demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
      // Before onSubscribe returned, nothing is asked of gRPC: no message may overtake it.
      grant = subscribed ? takeGrant() : 0;
    }
    if (grant > 0) {
      call.request(grant);
    }
  }

  /** Moves demand to gRPC, keeping at most {@link #MAX_GRANTED} ahead. Holds the lock. */
  private int takeGrant() {
    long room = MAX_GRANTED - granted;
    int grant = (int) Math.min(demand, room);
    if (grant > 0) {
      granted += grant;
      if (demand != Long.MAX_VALUE) {
        demand -= grant;
      }
    }
    return grant;
  }

  @Override
  public void cancel() {
    synchronized (this) {
      cancelled = true;
      subscriber = NoSubscription.CANCELLED; // rule 3.13 (still non-null: a second is refused)
    }
  }

  /** A message from the client (gRPC's listener). */
  void onMessage(Req message) {
    Subscriber<? super Req> s;
    int grant = 0;
    synchronized (this) {
      if (cancelled || ended) {
        return;
      }
      s = subscriber;
      granted--;
      if (demand > 0 && granted <= MAX_GRANTED / 2) {
        grant = takeGrant();
      }
      emitting = true;
    }
    try {
      s.onNext(message);
    } finally {
      // A bad request(n) made during onNext left its onError for now (rule 1.3).
      boolean endNow;
      Throwable error;
      synchronized (this) {
        emitting = false;
        endNow = endPending && !cancelled;
        endPending = false;
        error = endError;
        endError = null;
      }
      if (endNow) {
        deliverEnd(s, error);
      }
    }
    if (grant > 0) {
      call.request(grant);
    }
  }

  /** The client sent its last message. */
  void onHalfClose() {
    end(null);
  }

  /** The call was cancelled: the handler's read of the requests fails with {@code status}. */
  void onCancel(Status status) {
    end(status.asException());
  }

  private void end(Throwable error) {
    Subscriber<? super Req> s;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      s = subscriber;
      if (s == null || !subscribed || emitting) {
        endPending = true;
        endError = error;
        return;
      }
      if (cancelled) {
        return;
      }
    }
    deliverEnd(s, error);
  }

  private static void deliverEnd(Subscriber<?> s, Throwable error) {
    if (error == null) {
      s.onComplete();
    } else {
      s.onError(error);
    }
  }
}
