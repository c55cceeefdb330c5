package io.millrace.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.millrace.rpc.Headers;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import io.millrace.streams.internal.SerialSubscription;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One grpc-java call made over Millrace: the {@link ClientCall} the stubs drive, and the Subscriber
 * of the Millrace call's responses. A unary or server-streaming call starts at {@code halfClose}
 * (when its one request is known); a streaming call at {@code start}, its requests sent as the
 * server's credit allows ({@link ClientRequests}). The listener's callbacks go through a {@link
 * SerializingExecutor}, in order: headers, messages, close.
 */
final class MillraceClientCall<Req, Resp> extends ClientCall<Req, Resp>
    implements Subscriber<Resp>, Context.CancellationListener {
  private static final Executor DIRECT = Runnable::run;

  private final RpcClient rpc;
  private final MethodDescriptor<Req, Resp> method;
  private final CallOptions grpcOptions;
  private final SerializingExecutor callbacks;

  // Written by start(), read by callbacks and by cancel() from any thread.
  private volatile Listener<Resp> listener;
  private volatile Context context;
  private volatile ClientRequests<Req> requests; // a streaming call's
  private io.millrace.rpc.CallOptions options;
  private Deadline deadline;
  private Req request; // a one-request call's, until halfClose
  private boolean halfClosed;
  // The deadline's timer while no Millrace call carries it: until a one-request call's request is
  // known, and while a waitForReady call waits for the connection.
  private volatile java.util.concurrent.ScheduledFuture<?> deadlineTimer;
  private volatile WhenReady whenReady; // a waitForReady call's, while it waits
  private volatile Headers trailers; // set by the Millrace call before it ends
  private boolean closeDelivered; // the serialized callbacks' own: nothing after onClose

  // Demand and cancellation may come from any thread; the subscription arrives on the loop. It is
  // called from one thread at a time, whichever asks (rule 2.7).
  private final SerialSubscription subscription = new SerialSubscription();
  private boolean cancelled; // guarded by this
  private boolean closed; // guarded by this
  private volatile boolean headersDelivered;

  /**
   * Response headers not yet given to the listener: they go with the first message or, when the
   * call ends without one, into its trailers (grpc-java's trailers-only answer, where {@code
   * onHeaders} is not called).
   */
  private volatile Headers heldHeaders;

  MillraceClientCall(
      RpcClient rpc,
      MethodDescriptor<Req, Resp> method,
      CallOptions grpcOptions,
      Executor executor) {
    this.rpc = rpc;
    this.method = method;
    this.grpcOptions = grpcOptions;
    // No executor given: the connection's event loop, where the call's events come from (run at
    // once when they come on it; a call started or cancelled on the loop hears onReady or onClose
    // inside start or cancel).
    this.callbacks = new SerializingExecutor(executor != null ? executor : rpc.loop());
  }

  /** Runs a listener callback after those before it, and none after onClose. */
  private void callback(Runnable r) {
    callbacks.execute(
        () -> {
          if (!closeDelivered) {
            r.run();
          }
        });
  }

  @Override
  public void start(Listener<Resp> responseListener, Metadata headers) {
    synchronized (this) {
      if (listener != null) {
        throw new IllegalStateException("already started");
      }
      if (cancelled) {
        throw new IllegalStateException("call was cancelled");
      }
      listener = responseListener;
      context = Context.current(); // before a cancel can look for it
    }
    deadline = earliest(grpcOptions.getDeadline(), context.getDeadline());
    if (grpcOptions.getCredentials() != null) {
      close(
          io.grpc.Status.UNIMPLEMENTED.withDescription(
              "call credentials are not applied over a Millrace connection: add the headers with"
                  + " a ClientInterceptor"),
          new Metadata());
      return;
    }
    if (deadline != null && deadline.isExpired()) {
      close(
          io.grpc.Status.DEADLINE_EXCEEDED.withDescription(
              "the deadline passed before the call started"),
          new Metadata());
      return;
    }
    Headers requestHeaders;
    try {
      requestHeaders = GrpcMetadata.toHeaders(headers);
    } catch (IllegalArgumentException e) {
      close(
          io.grpc.Status.INTERNAL.withDescription("a request header is invalid: " + e.getMessage()),
          new Metadata());
      return;
    }
    options =
        io.millrace.rpc.CallOptions.DEFAULT
            .withHeaders(requestHeaders)
            .onHeaders(this::onHeaders)
            .onTrailers(t -> trailers = t);
    context.addListener(this, DIRECT); // a cancelled Context cancels the call
    synchronized (this) {
      if (closed) {
        // A cancel came first: its close found no listener to remove, and no call is started.
        context.removeListener(this);
        return;
      }
    }
    if (method.type().clientSendsStream()) {
      ClientRequests<Req> r = new ClientRequests<>(() -> callback(responseListener::onReady));
      requests = r;
      if (mustWaitForReady()) {
        waitForReady(() -> startStreaming(r));
      } else {
        startStreaming(r);
      }
    } else {
      callback(responseListener::onReady); // a one-request call can always take its request
      // Until halfClose starts the Millrace call (whose timer takes over), the deadline is here.
      armDeadline("the deadline passed before the request was sent");
    }
  }

  /**
   * Starts the deadline's timer (if the call has a deadline), cancelling the call when it fires.
   */
  private void armDeadline(String why) {
    if (deadline != null) {
      deadlineTimer =
          rpc.loop()
              .schedule(
                  () -> cancelWith(io.grpc.Status.DEADLINE_EXCEEDED.withDescription(why)),
                  Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS)),
                  TimeUnit.NANOSECONDS);
      boolean ended;
      synchronized (this) {
        ended = closed;
      }
      if (ended) {
        disarmDeadline(); // closed meanwhile: close() found no timer to cancel
      }
    }
  }

  private void disarmDeadline() {
    java.util.concurrent.ScheduledFuture<?> timer = deadlineTimer;
    if (timer != null) {
      deadlineTimer = null;
      timer.cancel(false);
    }
  }

  /**
   * Whether the Millrace call must wait: a {@code waitForReady} call while the connection cannot
   * take calls (its hand-off is full, the peer is not reading, or a reconnecting connection is
   * between transports), which grpc-java holds until its channel is ready. A call without
   * waitForReady goes at once: a full hand-off fails it RESOURCE_EXHAUSTED (a reconnecting
   * connection parks it while between transports, as it parks any call).
   */
  private boolean mustWaitForReady() {
    return grpcOptions.isWaitForReady() && !rpc.connection().isReadyForCalls();
  }

  /**
   * Runs {@code startCall}, which makes the Millrace call, once the connection can take it. A
   * closed connection also releases the waiting call, which then fails as any call on it does
   * (UNAVAILABLE); the deadline still applies while it waits.
   */
  private void waitForReady(Runnable startCall) {
    armDeadline("the deadline passed while the call waited for the connection to be ready");
    WhenReady waiter =
        new WhenReady(
            () -> {
              disarmDeadline();
              synchronized (this) {
                if (cancelled || closed) {
                  return;
                }
              }
              startCall.run();
            });
    whenReady = waiter;
    rpc.connection().whenReadyForCalls(waiter);
    synchronized (this) {
      if (!closed) {
        return;
      }
    }
    waiter.forget(); // ended meanwhile: close() may have missed it
  }

  /**
   * What a waiting call leaves with the connection, which keeps its callbacks until it is ready or
   * closed and cannot take one back: a call that ends first forgets its start, so that what stays
   * behind is this small object, not the call, its listener and its request.
   */
  private static final class WhenReady implements Runnable {
    private volatile Runnable start;

    WhenReady(Runnable start) {
      this.start = start;
    }

    void forget() {
      start = null;
    }

    @Override
    public void run() {
      Runnable s = start;
      start = null;
      if (s != null) {
        s.run();
      }
    }
  }

  /** {@code o} with the time left to the deadline, counted from now (the call starts now). */
  private io.millrace.rpc.CallOptions withDeadline(io.millrace.rpc.CallOptions o) {
    return deadline == null
        ? o
        : o.withTimeout(
            Duration.ofNanos(Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS))));
  }

  private static Deadline earliest(Deadline a, Deadline b) {
    return a == null ? b : b == null ? a : a.minimum(b);
  }

  @Override
  public void request(int numMessages) {
    if (numMessages <= 0) {
      throw new IllegalArgumentException("numMessages must be positive: " + numMessages);
    }
    subscription.request(numMessages);
  }

  @Override
  public void cancel(String message, Throwable cause) {
    if (message == null && cause == null) {
      cause = new java.util.concurrent.CancellationException("cancelled without a message");
    }
    io.grpc.Status status = io.grpc.Status.CANCELLED;
    if (message != null) {
      status = status.withDescription(message);
    }
    if (cause != null) {
      status = status.withCause(cause);
    }
    cancelWith(status);
  }

  private void cancelWith(io.grpc.Status status) {
    boolean started;
    synchronized (this) {
      if (cancelled || closed) {
        return;
      }
      cancelled = true;
      started = listener != null;
    }
    if (!started) {
      return; // cancelled before start: start() refuses, as grpc-java's calls do
    }
    subscription.cancel();
    ClientRequests<Req> r = requests;
    if (r != null) {
      r.fail(GrpcMetadata.fromGrpc(status, null).asException());
    }
    close(status, new Metadata());
  }

  @Override
  public void halfClose() {
    if (halfClosed) {
      throw new IllegalStateException("already half-closed");
    }
    halfClosed = true;
    if (requests != null) {
      requests.halfClose();
      return;
    }
    disarmDeadline();
    synchronized (this) {
      if (cancelled || closed) {
        return;
      }
    }
    Req r = request;
    request = null;
    if (r == null) {
      cancelWith(io.grpc.Status.INTERNAL.withDescription("the call ended without a request"));
      return;
    }
    if (mustWaitForReady()) {
      waitForReady(() -> startOneRequest(r));
    } else {
      startOneRequest(r);
    }
  }

  /** Makes the Millrace call of a call whose client sends a stream. */
  private void startStreaming(ClientRequests<Req> r) {
    Publisher<Resp> responses =
        method.type() == MethodDescriptor.Type.CLIENT_STREAMING
            ? rpc.clientStreaming(method, r, withDeadline(options))
            : rpc.bidiStreaming(method, r, withDeadline(options));
    responses.subscribe(this);
  }

  /** Makes the Millrace call of a call with one request. */
  private void startOneRequest(Req r) {
    Publisher<Resp> responses =
        method.type() == MethodDescriptor.Type.UNARY
            ? rpc.unary(method, r, withDeadline(options))
            : rpc.serverStreaming(method, r, withDeadline(options));
    responses.subscribe(this);
  }

  @Override
  public void sendMessage(Req message) {
    if (halfClosed) {
      throw new IllegalStateException("sendMessage after halfClose");
    }
    if (requests != null) {
      requests.send(message);
    } else if (request != null) {
      cancelWith(io.grpc.Status.INTERNAL.withDescription("too many requests for " + method));
    } else {
      request = message;
    }
  }

  @Override
  public boolean isReady() {
    if (requests != null) {
      return requests.isReady();
    }
    synchronized (this) {
      return !halfClosed && !cancelled && !closed;
    }
  }

  // ---- The Millrace call's responses ----

  @Override
  public void onSubscribe(Subscription s) {
    java.util.Objects.requireNonNull(s, "subscription (rule 2.13)");
    boolean cancelNow;
    synchronized (this) {
      cancelNow = cancelled || closed;
    }
    if (cancelNow) {
      subscription.cancel();
    }
    subscription.set(s); // with the demand asked meanwhile, or the cancel
  }

  private void onHeaders(Headers headers) {
    heldHeaders = headers;
  }

  @Override
  public void onNext(Resp response) {
    if (response == null) { // the call fails, and the responses' Publisher is told (rule 2.13)
      NullPointerException e = new NullPointerException("a null response (rule 2.13)");
      cancelWith(io.grpc.Status.INTERNAL.withDescription(e.getMessage()));
      throw e;
    }
    if (!headersDelivered) {
      headersDelivered = true; // gRPC listeners always see headers before messages
      Metadata metadata = GrpcMetadata.addTo(new Metadata(), heldHeaders);
      heldHeaders = null;
      callback(() -> listener.onHeaders(metadata));
    }
    callback(() -> listener.onMessage(response));
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      NullPointerException e = new NullPointerException("onError(null) (rule 2.13)");
      onError(e);
      throw e;
    }
    Status status = Status.fromThrowable(t);
    Headers t2 =
        t instanceof StatusException se && se.trailers() != null ? se.trailers() : trailers;
    close(GrpcMetadata.toGrpc(status), withHeldHeaders(GrpcMetadata.trailers(status, t2)));
  }

  @Override
  public void onComplete() {
    close(io.grpc.Status.OK, withHeldHeaders(GrpcMetadata.addTo(new Metadata(), trailers)));
  }

  /** {@code trailers}, after the response headers of a call that ended without a message. */
  private Metadata withHeldHeaders(Metadata trailers) {
    Headers held = heldHeaders;
    if (held == null || headersDelivered) {
      return trailers;
    }
    heldHeaders = null;
    Metadata all = GrpcMetadata.addTo(new Metadata(), held);
    all.merge(trailers);
    return all;
  }

  /** The io.grpc.Context the call started in was cancelled (or its deadline passed). */
  @Override
  public void cancelled(Context c) {
    Throwable cause = c.cancellationCause();
    io.grpc.Status status =
        cause instanceof java.util.concurrent.TimeoutException
            ? io.grpc.Status.DEADLINE_EXCEEDED.withDescription("the context's deadline passed")
            : io.grpc.Status.CANCELLED
                .withDescription("the context was cancelled")
                .withCause(cause);
    cancelWith(status);
  }

  private void close(io.grpc.Status status, Metadata trailers) {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    disarmDeadline();
    WhenReady waiter = whenReady;
    if (waiter != null) {
      waiter.forget();
    }
    Context c = context;
    if (c != null) {
      c.removeListener(this);
    }
    callbacks.execute(
        () -> {
          if (!closeDelivered) {
            closeDelivered = true;
            listener.onClose(status, trailers);
          }
        });
  }
}
