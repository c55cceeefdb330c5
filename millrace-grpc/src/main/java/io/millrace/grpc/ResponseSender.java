package io.millrace.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.millrace.rpc.BridgedCall;
import io.millrace.rpc.Headers;
import io.millrace.rpc.Status;
import io.millrace.streams.internal.Relay;
import io.millrace.streams.internal.Scalar;
import io.millrace.streams.internal.SerialSubscription;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Sends a Millrace handler's responses on a gRPC server call: the response headers with the first
 * message, the messages as the call can take them, and the status with the trailers at the end.
 *
 * <p>Backpressure: responses are requested in a small window and only while gRPC says the call is
 * ready ({@link ServerCall#isReady}, its transport's buffer below its threshold); when it is not,
 * the next window waits for {@link #onReady}. So a client that reads slowly holds the handler back
 * through HTTP/2 flow control, and the bridge keeps at most a window's messages beyond it.
 *
 * <p>Threads: the Reactive Streams signals come one at a time from the handler's thread and send on
 * the call; {@link #onReady} and {@link #cancel} come from gRPC's listener thread. The handler's
 * Subscription is called from one thread at a time and never under a lock ({@link
 * SerialSubscription}).
 */
final class ResponseSender<Resp> implements Subscriber<Resp>, Relay.Target {
  /** Responses requested at a time. */
  static final int WINDOW = 16;

  private final ServerCall<?, Resp> call;
  private final BridgedCall<?, Resp> bridged;

  /** Unary and client-streaming methods answer exactly one message. */
  private final boolean oneResponse;

  private final SerialSubscription subscription = new SerialSubscription();
  private boolean subscribed; // guarded by this
  private boolean cancelled; // guarded by this
  private long outstanding; // requested, not yet received; guarded by this
  private boolean headersSent; // the handler's thread only
  private int sent; // the handler's thread only
  private volatile boolean done;

  ResponseSender(ServerCall<?, Resp> call, BridgedCall<?, Resp> bridged, boolean oneResponse) {
    this.call = call;
    this.bridged = bridged;
    this.oneResponse = oneResponse;
  }

  @Override
  public void onSubscribe(Subscription s) {
    java.util.Objects.requireNonNull(s, "subscription (rule 2.13)");
    boolean second;
    synchronized (this) {
      second = subscribed;
      subscribed = true;
    }
    if (second) {
      s.cancel();
      return;
    }
    subscription.set(s);
    if (oneResponse) {
      subscription.request(2); // the second, if any, is an error
    } else {
      topUp();
    }
  }

  /**
   * Sends what {@code responses} gives. A one-response answer given at once ({@link Scalar}) is
   * called, not subscribed to: on the listener's thread, which also reports a cancel, so nothing
   * races with it.
   */
  void take(org.reactivestreams.Publisher<Resp> responses) {
    if (oneResponse && Scalar.is(responses)) {
      Scalar.signal(responses, this); // Mono.just and the like
    } else {
      responses.subscribe(this);
    }
  }

  /** Requests the next window when the call can take more and the last window is half used. */
  private void topUp() {
    long n;
    synchronized (this) {
      if (cancelled || done || !subscribed || outstanding > WINDOW / 2) {
        return;
      }
      if (!call.isReady()) {
        return; // onReady tops up
      }
      n = WINDOW - outstanding;
      outstanding = WINDOW;
    }
    subscription.request(n);
  }

  /** gRPC's transport can take more: the listener's onReady. */
  void onReady() {
    if (!oneResponse) {
      topUp();
    }
  }

  /** The call was cancelled (by the client, its deadline or the connection): stop the handler. */
  void cancel() {
    done = true;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
    }
    subscription.cancel();
  }

  @Override
  public void onNext(Resp response) {
    if (response == null) { // the call fails, and the handler's Publisher is told (rule 2.13)
      NullPointerException e = new NullPointerException("a handler emitted null (rule 2.13)");
      if (!done) {
        fail(Status.INTERNAL.withMessage(e.getMessage()));
      }
      throw e;
    }
    if (done) {
      return;
    }
    if (oneResponse && sent == 1) {
      fail(
          Status.INTERNAL.withMessage("the handler of a unary method gave more than one response"));
      return;
    }
    sendHeaders();
    call.sendMessage(response);
    sent++;
    if (!oneResponse) {
      boolean refill;
      synchronized (this) {
        refill = --outstanding <= WINDOW / 2; // the next window once half of this one came
      }
      if (refill) {
        topUp();
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      NullPointerException e = new NullPointerException("onError(null) (rule 2.13)");
      onError(e);
      throw e;
    }
    if (done) {
      return;
    }
    close(Status.fromThrowable(t));
  }

  @Override
  public void onComplete() {
    if (done) {
      return;
    }
    close(
        oneResponse && sent == 0
            ? Status.INTERNAL.withMessage("the handler of a unary method gave no response")
            : Status.OK);
  }

  /** Ends the call with {@code status} and stops the handler. */
  private void fail(Status status) {
    synchronized (this) {
      cancelled = true;
    }
    subscription.cancel();
    close(status);
  }

  private void sendHeaders() {
    if (!headersSent) {
      headersSent = true;
      call.sendHeaders(GrpcMetadata.addTo(new Metadata(), bridged.takeResponseHeaders()));
    }
  }

  private void close(Status status) {
    done = true;
    Headers trailers = bridged.trailers();
    if (!headersSent) {
      // Trailers-only: the response headers the handler set travel with the trailers.
      Headers headers = bridged.takeResponseHeaders();
      if (headers != null) {
        trailers = trailers == null ? headers : new Headers().putAll(headers).putAll(trailers);
      }
    }
    call.close(GrpcMetadata.toGrpc(status), GrpcMetadata.trailers(status, trailers));
  }
}
