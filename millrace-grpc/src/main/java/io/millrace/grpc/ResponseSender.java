package io.millrace.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.millrace.rpc.BridgedCall;
import io.millrace.rpc.Headers;
import io.millrace.rpc.Status;
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
 * the call; {@link #onReady} and {@link #cancel} come from gRPC's listener thread. Calls on the
 * handler's Subscription are made under this object's lock (rule 2.7).
 */
final class ResponseSender<Resp> implements Subscriber<Resp> {
  /** Responses requested at a time. */
  static final int WINDOW = 16;

  private final ServerCall<?, Resp> call;
  private final BridgedCall<?, Resp> bridged;

  /** Unary and client-streaming methods answer exactly one message. */
  private final boolean oneResponse;

  /** Sent when a fire-and-forget method completes without a message; null for other methods. */
  private final Resp emptyResponse;

  private Subscription subscription;
  private boolean cancelled; // guarded by this
  private long outstanding; // requested, not yet received; guarded by this
  private boolean headersSent; // the handler's thread only
  private int sent; // the handler's thread only
  private volatile boolean done;

  ResponseSender(
      ServerCall<?, Resp> call, BridgedCall<?, Resp> bridged, boolean oneResponse, Resp empty) {
    this.call = call;
    this.bridged = bridged;
    this.oneResponse = oneResponse;
    this.emptyResponse = empty;
  }

  @Override
  public void onSubscribe(Subscription s) {
    boolean cancelNow;
    synchronized (this) {
      if (subscription != null) {
        cancelNow = true;
      } else {
        subscription = s;
        cancelNow = cancelled;
      }
    }
    if (cancelNow) {
      s.cancel();
      return;
    }
    if (oneResponse) {
      request(2); // the second, if any, is an error
    } else {
      topUp();
    }
  }

  private void request(long n) {
    synchronized (this) {
      if (cancelled) {
        return;
      }
      outstanding += n;
      subscription.request(n);
    }
  }

  /** Requests the next window when the call can take more and the last window is half used. */
  private void topUp() {
    synchronized (this) {
      if (cancelled || done || subscription == null || outstanding > WINDOW / 2) {
        return;
      }
      if (!call.isReady()) {
        return; // onReady tops up
      }
      long n = WINDOW - outstanding;
      outstanding = WINDOW;
      subscription.request(n);
    }
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
    Subscription s;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      s = subscription;
      if (s != null) {
        s.cancel();
      }
    }
  }

  @Override
  public void onNext(Resp response) {
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
      synchronized (this) {
        outstanding--;
      }
      topUp();
    }
  }

  @Override
  public void onError(Throwable t) {
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
    if (oneResponse && sent == 0) {
      if (emptyResponse == null) {
        close(Status.INTERNAL.withMessage("the handler of a unary method gave no response"));
        return;
      }
      sendHeaders();
      call.sendMessage(emptyResponse);
    }
    close(Status.OK);
  }

  /** Ends the call with {@code status} and stops the handler. */
  private void fail(Status status) {
    synchronized (this) {
      if (!cancelled) {
        cancelled = true;
        subscription.cancel();
      }
    }
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
