package io.millrace.grpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import io.millrace.streams.internal.SerialSubscription;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One call of a grpc-java service hosted on a Millrace server: the {@link ServerCall} the service's
 * {@link ServerCallHandler} (and its {@code ServerInterceptor}s) drive, and the Publisher of
 * responses Millrace sends. The call's {@link io.grpc.Context} carries the deadline and is
 * cancelled with the Millrace call, so {@code Context.current().isCancelled()} works in the service
 * as under grpc-java's server.
 *
 * <p>Listener callbacks run one at a time ({@link SerializingExecutor}, on the executor given to
 * {@link HostedServices}, else on the thread that brings the event) with the call's Context
 * attached, and none after {@code onComplete} or {@code onCancel}. {@link #isReady} is the Millrace
 * caller's demand: a service that sends while not ready is buffered here, as grpc-java's transport
 * buffers it; services that respect isReady/onReady keep memory bounded.
 *
 * <p>The end, as grpc-java's server has it: the service's {@code close} ends the call (a second
 * close throws) once the responses queued before it have gone, and the service then hears {@code
 * onComplete}; a cancel (the caller, its deadline, the connection, a failing request stream or a
 * listener that throws) ends it at once, even after a close whose end has not gone yet, after which
 * the service's sends and close are ignored and it hears {@code onCancel}. A method with one
 * response (unary, client streaming) sends it with the close, as grpc-java's client takes it: the
 * trailers the close adds go with it, and a close with an error sends the error instead.
 */
final class HostedCall<Req, Resp> extends ServerCall<Req, Resp>
    implements Publisher<Resp>, Subscription {
  private static final System.Logger LOG = System.getLogger(HostedCall.class.getName());

  private final io.grpc.MethodDescriptor<Req, Resp> method;
  private final ServerCallHandler<Req, Resp> handler;
  private final ServerContext context;
  private final SerializingExecutor callbacks;
  private final Req singleRequest; // unary and server-streaming calls
  private final boolean oneResponse; // unary and client-streaming calls
  private final Publisher<Req> requests; // client-streaming and bidi calls
  private final AtomicInteger wip = new AtomicInteger();

  /**
   * A cancel of the Context from outside (its parent's: the gRPC endpoint's call). Its own deadline
   * is left to Millrace's timer for the same deadline, which ends the call on its own thread.
   */
  private final Context.CancellationListener onContextCancelled =
      c -> {
        if (!(c.cancellationCause() instanceof TimeoutException)) {
          cancelledBy(Status.CANCELLED, false);
        }
      };

  private Subscriber<? super Resp> downstream;
  private volatile Context.CancellableContext grpcContext;
  private volatile RequestReader requestReader;

  // The serialized callbacks' own.
  private Listener<Req> listener;
  private boolean finished; // onComplete or onCancel was delivered

  // Guarded by this.
  private final ArrayDeque<Resp> queue = new ArrayDeque<>();
  private long demand;
  private boolean subscribed; // onSubscribe returned: signals may go downstream
  private io.grpc.Status end; // the end to signal once the queue is sent
  private Throwable endSignal; // non-null: signalled for the end instead of end's exception
  private Metadata endTrailers;
  private boolean endFromService; // end is the service's close, not a cancel
  private boolean done; // the end was signalled downstream, or downstream cancelled
  private boolean ended; // the end was signalled downstream
  private boolean serviceClosed;
  private boolean cancelled;
  private boolean singleDelivered;

  private HostedCall(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      ServerContext context,
      Executor executor,
      Req singleRequest,
      Publisher<Req> requests) {
    this.method = method;
    this.handler = handler;
    this.context = context;
    this.callbacks = new SerializingExecutor(executor != null ? executor : Runnable::run);
    this.singleRequest = singleRequest;
    this.requests = requests;
    this.oneResponse = method.getType().serverSendsOneMessage();
  }

  static <Req, Resp> Publisher<Resp> single(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      Executor executor,
      Req request,
      ServerContext context) {
    return new HostedCall<>(method, handler, context, executor, request, null);
  }

  static <Req, Resp> Publisher<Resp> streaming(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      Executor executor,
      Publisher<Req> requests,
      ServerContext context) {
    return new HostedCall<>(method, handler, context, executor, null, requests);
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9, before the service starts
    }
    if (downstream != null) {
      NoSubscription.refuseSecond(subscriber, "a hosted call's responses");
      return;
    }
    downstream = subscriber;
    Duration left = context.timeRemaining();
    Context.CancellableContext c =
        left == null
            ? Context.current().withCancellation()
            : Context.current()
                .withDeadlineAfter(
                    Math.max(0, left.toNanos()), TimeUnit.NANOSECONDS, deadlineTimers());
    grpcContext = c;
    if (requests != null) {
      requestReader = new RequestReader();
    }
    Metadata headers = GrpcMetadata.addTo(new Metadata(), context.requestHeaders());
    // startCall first: every later callback, a cancel included, finds the listener.
    callbacks.execute(
        () -> {
          Context previous = c.attach();
          try {
            listener = handler.startCall(this, headers);
          } catch (Throwable t) {
            listener = new Listener<>() {};
            serviceFailed(t);
          } finally {
            c.detach(previous);
          }
        });
    c.addListener(onContextCancelled, Runnable::run);
    context.onCancel(() -> cancelledBy(context.cancellation(), false));
    subscriber.onSubscribe(this);
    synchronized (this) {
      subscribed = true; // what the service did meanwhile (a refusal, say) may go out now
    }
    drain();
    if (requests != null) {
      requests.subscribe(requestReader); // the service's request(n) from startCall is kept
    }
  }

  /**
   * Where the Context's deadline timer runs: the connection's event loop, where the call is
   * subscribed (Netty's one global timer thread would serialize every hosted call's deadline).
   */
  private static java.util.concurrent.ScheduledExecutorService deadlineTimers() {
    java.util.concurrent.ScheduledExecutorService loop =
        io.netty.util.internal.ThreadExecutorMap.currentExecutor();
    return loop != null ? loop : GlobalEventExecutor.INSTANCE;
  }

  /** Runs a listener callback, in order, with the call's Context attached; none after the end. */
  private void deliver(Consumer<Listener<Req>> callback, boolean last) {
    callbacks.execute(
        () -> {
          if (finished || listener == null) {
            return;
          }
          finished = last;
          Context previous = grpcContext.attach();
          try {
            callback.accept(listener);
          } catch (Throwable t) {
            serviceFailed(t);
          } finally {
            grpcContext.detach(previous);
          }
        });
  }

  /** A listener callback threw: the call ends UNKNOWN, as grpc-java's server ends it. */
  private void serviceFailed(Throwable t) {
    LOG.log(System.Logger.Level.WARNING, "a listener of " + method + " threw", t);
    cancelledBy(Status.UNKNOWN.withCause(t), false);
  }

  /**
   * The call ends early, with {@code why}: the caller cancelled (CANCELLED), its deadline passed
   * (DEADLINE_EXCEEDED), the request stream failed or the service threw. The response ends with
   * {@code why}, the Context is cancelled, and the service hears onCancel; once, and never after
   * the end has gone to the caller.
   */
  private void cancelledBy(Status why, boolean downstreamGone) {
    cancelledBy(why, downstreamGone, null);
  }

  /** {@link #cancelledBy(Status, boolean)}, the caller told {@code signal} (when not null). */
  private void cancelledBy(Status why, boolean downstreamGone, Throwable signal) {
    if (why == null) {
      why = Status.CANCELLED;
    }
    io.grpc.Status status = GrpcMetadata.toGrpc(why);
    synchronized (this) {
      if (cancelled || ended) {
        return;
      }
      if (downstreamGone) {
        done = true; // decided with the check above: a close racing this sees both or neither
      }
      cancelled = true;
      // With the check, at once: a drain from now on sends this end, never the service's close.
      end = status;
      endSignal = signal;
      endTrailers = null;
      endFromService = false;
      queue.clear();
    }
    drain();
    grpcContext.cancel(
        why.code() == Status.Code.DEADLINE_EXCEEDED
            ? new TimeoutException("the deadline passed")
            : status.asRuntimeException());
    RequestReader reader = requestReader;
    if (reader != null) {
      reader.cancel();
    }
    deliver(Listener::onCancel, true);
  }

  // ---- ServerCall: what the service does ----

  @Override
  public void request(int numMessages) {
    RequestReader reader = requestReader;
    if (reader != null) {
      reader.request(numMessages);
      return;
    }
    synchronized (this) {
      if (singleDelivered || cancelled) {
        return;
      }
      singleDelivered = true;
    }
    Req r = singleRequest;
    deliver(l -> l.onMessage(r), false);
    deliver(Listener::onHalfClose, false);
  }

  @Override
  public void sendHeaders(Metadata headers) {
    io.millrace.rpc.Headers converted =
        GrpcMetadata.toHeadersSkippingInvalid(headers, method, "headers");
    if (converted.size() > 0) {
      context.responseHeaders().putAll(converted);
    }
  }

  @Override
  public void sendMessage(Resp message) {
    boolean tooMany;
    synchronized (this) {
      if (serviceClosed) {
        throw new IllegalStateException("sendMessage after close");
      }
      if (end != null || done) {
        return; // cancelled: grpc-java drops what a cancelled call sends too
      }
      tooMany = oneResponse && !queue.isEmpty();
      if (!tooMany) {
        queue.add(message);
      }
    }
    if (tooMany) {
      // grpc-java's server ends such a call INTERNAL, and the service hears onCancel.
      cancelledBy(Status.INTERNAL.withMessage("Too many responses"), false);
      return;
    }
    drain();
  }

  @Override
  public boolean isReady() {
    synchronized (this) {
      return !done && end == null && demand > queue.size();
    }
  }

  @Override
  public void close(io.grpc.Status status, Metadata trailers) {
    // Converted before anything changes: entries Millrace's headers cannot carry are left out.
    io.millrace.rpc.Headers converted =
        GrpcMetadata.toHeadersSkippingInvalid(trailers, method, "trailers");
    boolean ends;
    boolean noResponse;
    synchronized (this) {
      if (serviceClosed) {
        throw new IllegalStateException("call already closed");
      }
      serviceClosed = true;
      ends = end == null && !done && !cancelled;
      noResponse = oneResponse && status.isOk() && queue.isEmpty();
      if (ends && !noResponse) {
        if (converted.size() > 0) {
          context.trailers().putAll(converted);
        }
        end = status;
        endTrailers = trailers;
        endFromService = true;
        if (oneResponse && !status.isOk()) {
          queue.clear(); // the error goes instead of the response
        }
      }
    }
    if (!ends) {
      return; // already cancelled: the service hears (or heard) onCancel
    }
    if (noResponse) {
      // grpc-java's server ends such a call INTERNAL, and the service hears onCancel.
      cancelledBy(Status.INTERNAL.withMessage("Completed without a response"), false);
      return;
    }
    RequestReader reader = requestReader;
    if (reader != null) {
      reader.cancel(); // requests the service no longer reads
    }
    drain();
  }

  /** The service's close has gone to the caller: the service hears onComplete. */
  private void completed() {
    deliver(Listener::onComplete, true);
    Context.CancellableContext c = grpcContext;
    c.removeListener(onContextCancelled);
    c.cancel(null); // grpc-java cancels a call's Context once it is over
  }

  @Override
  public boolean isCancelled() {
    synchronized (this) {
      return cancelled;
    }
  }

  @Override
  public io.grpc.MethodDescriptor<Req, Resp> getMethodDescriptor() {
    return method;
  }

  /**
   * What grpc-java's server gives a call of its own: the caller's address ({@code
   * Grpc.TRANSPORT_ATTR_REMOTE_ADDR}) when the transport says it, and over TLS the session ({@code
   * TRANSPORT_ATTR_SSL_SESSION}, with the client's certificates under mutual TLS), so that
   * interceptors that authorise by certificate work unchanged.
   */
  @Override
  public Attributes getAttributes() {
    java.net.SocketAddress remote = context.remoteAddress();
    javax.net.ssl.SSLSession tls = context.tlsSession();
    if (remote == null && tls == null) {
      return Attributes.EMPTY;
    }
    Attributes.Builder b = Attributes.newBuilder();
    if (remote != null) {
      b.set(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote);
    }
    if (tls != null) {
      b.set(io.grpc.Grpc.TRANSPORT_ATTR_SSL_SESSION, tls);
    }
    return b.build();
  }

  /** PRIVACY_AND_INTEGRITY over TLS, else NONE, as grpc-java's server says of its connections. */
  @Override
  public io.grpc.SecurityLevel getSecurityLevel() {
    return context.tlsSession() == null
        ? io.grpc.SecurityLevel.NONE
        : io.grpc.SecurityLevel.PRIVACY_AND_INTEGRITY;
  }

  @Override
  public String getAuthority() {
    return null;
  }

  // ---- Subscription: the Millrace call's demand for responses ----

  @Override
  public void request(long n) {
    if (n <= 0) {
      // The caller hears rule 3.9's error; the service hears the call cancelled.
      cancelledBy(
          Status.CANCELLED.withMessage("the caller broke rule 3.9: request(" + n + ")"),
          false,
          new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
      return;
    }
    boolean becameReady;
    synchronized (this) {
      boolean wasReady = demand > queue.size();
      demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
      becameReady = !wasReady && demand > queue.size() && end == null && !done;
    }
    drain();
    if (becameReady) {
      deliver(Listener::onReady, false); // after startCall: the callbacks run in order
    }
  }

  @Override
  public void cancel() {
    cancelledBy(Status.CANCELLED, true);
    synchronized (this) {
      done = true; // also when the call had ended otherwise and its end waited
    }
    downstream = NoSubscription.CANCELLED; // rule 3.13: a drain under way drops what it has
  }

  /**
   * Sends what may go: queued responses within the demand, then the end once the queue is empty.
   */
  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      for (; ; ) {
        Resp next = null;
        io.grpc.Status last = null;
        Throwable signal = null;
        Metadata trailers = null;
        boolean serviceEnded = false;
        synchronized (this) {
          if (done || !subscribed) {
            break;
          }
          // One response waits for the close, which may add trailers or turn it into an error.
          if (demand > 0 && !queue.isEmpty() && (!oneResponse || end != null)) {
            next = queue.poll();
            if (demand != Long.MAX_VALUE) {
              demand--;
            }
          } else if (end != null && queue.isEmpty()) {
            last = end;
            signal = endSignal;
            trailers = endTrailers;
            serviceEnded = endFromService;
            done = true;
            ended = true;
          } else {
            break;
          }
        }
        if (next != null) {
          downstream.onNext(next);
          continue;
        }
        if (signal != null) {
          downstream.onError(signal);
        } else if (last.isOk()) {
          downstream.onComplete();
        } else {
          downstream.onError(GrpcMetadata.fromGrpc(last, trailers).asException());
        }
        if (serviceEnded) {
          completed();
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  /** Reads a streaming call's requests as the service asks for them ({@code request(n)}). */
  private final class RequestReader implements Subscriber<Req> {
    private final SerialSubscription upstream = new SerialSubscription();

    /**
     * The requests ended (onComplete, onError): the subscription is not called any more (rule 2.3),
     * whatever the service does as it hears the end.
     */
    private volatile boolean ended;

    void request(int n) {
      if (!ended) {
        upstream.request(n);
      }
    }

    void cancel() {
      if (!ended) {
        upstream.cancel();
      }
    }

    @Override
    public void onSubscribe(Subscription s) {
      upstream.set(java.util.Objects.requireNonNull(s, "subscription (rule 2.13)"));
    }

    @Override
    public void onNext(Req message) {
      if (message == null) { // the call fails, and the requests' Publisher is told (rule 2.13)
        NullPointerException e = new NullPointerException("a null request (rule 2.13)");
        cancelledBy(Status.INTERNAL.withMessage(e.getMessage()), false);
        throw e;
      }
      deliver(l -> l.onMessage(message), false);
    }

    @Override
    public void onError(Throwable t) {
      ended = true;
      if (t == null) {
        NullPointerException e = new NullPointerException("onError(null) (rule 2.13)");
        cancelledBy(Status.INTERNAL.withMessage(e.getMessage()), false);
        throw e;
      }
      cancelledBy(Status.fromThrowable(t), false); // the caller's stream failed: so does the call
    }

    @Override
    public void onComplete() {
      ended = true;
      deliver(Listener::onHalfClose, false);
    }
  }
}
