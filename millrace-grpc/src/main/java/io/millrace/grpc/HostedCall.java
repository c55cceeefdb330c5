package io.millrace.grpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.millrace.rpc.ServerContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * <p>Listener callbacks run one at a time ({@link SerializingExecutor}) with the call's Context
 * attached. {@link #isReady} is the Millrace caller's demand: a service that sends while not ready
 * is buffered here, as grpc-java's transport buffers it; services that respect isReady/onReady
 * (grpc-java's flow-control pattern) keep memory bounded.
 */
final class HostedCall<Req, Resp> extends ServerCall<Req, Resp>
    implements Publisher<Resp>, Subscription {
  private static final System.Logger LOG = System.getLogger(HostedCall.class.getName());

  private final io.grpc.MethodDescriptor<Req, Resp> method;
  private final ServerCallHandler<Req, Resp> handler;
  private final ServerContext context;
  private final SerializingExecutor callbacks = new SerializingExecutor(Runnable::run);
  private final Req singleRequest; // unary and server-streaming calls
  private final Publisher<Req> requests; // client-streaming and bidi calls
  private final AtomicInteger wip = new AtomicInteger();

  private Context.CancellableContext grpcContext;
  private final Context.CancellationListener onContextCancelled =
      c -> cancelledBy(c.cancellationCause());
  private Listener<Req> listener; // written and read by the serialized callbacks
  private Subscriber<? super Resp> downstream;
  private RequestReader requestReader;

  // Guarded by this.
  private final ArrayDeque<Resp> queue = new ArrayDeque<>();
  private long demand;
  private io.grpc.Status closeStatus; // set by close(): the end, once the queue is sent
  private boolean done; // the end was signalled downstream, or the caller cancelled
  private boolean cancelled;
  private boolean singleDelivered;
  private boolean subscribed; // onSubscribe returned: signals may go downstream

  private HostedCall(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      ServerContext context,
      Req singleRequest,
      Publisher<Req> requests) {
    this.method = method;
    this.handler = handler;
    this.context = context;
    this.singleRequest = singleRequest;
    this.requests = requests;
  }

  static <Req, Resp> Publisher<Resp> single(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      Req request,
      ServerContext context) {
    return new HostedCall<>(method, handler, context, request, null);
  }

  static <Req, Resp> Publisher<Resp> streaming(
      io.grpc.MethodDescriptor<Req, Resp> method,
      ServerCallHandler<Req, Resp> handler,
      Publisher<Req> requests,
      ServerContext context) {
    return new HostedCall<>(method, handler, context, null, requests);
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (downstream != null) {
      subscriber.onSubscribe(this);
      subscriber.onError(new IllegalStateException("a hosted call answers one subscriber"));
      return;
    }
    downstream = subscriber;
    Duration left = context.timeRemaining();
    grpcContext =
        left == null
            ? Context.current().withCancellation()
            : Context.current()
                .withDeadlineAfter(
                    Math.max(0, left.toNanos()),
                    TimeUnit.NANOSECONDS,
                    GlobalEventExecutor.INSTANCE);
    grpcContext.addListener(onContextCancelled, Runnable::run);
    Metadata headers = GrpcMetadata.addTo(new Metadata(), context.requestHeaders());
    if (requests != null) {
      requestReader = new RequestReader();
    }
    // startCall first: every later callback (onReady on the first demand) finds the listener.
    callbacks.execute(
        () -> {
          Context previous = grpcContext.attach();
          try {
            listener = handler.startCall(this, headers);
          } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "starting a call of " + method + " failed", e);
            close(io.grpc.Status.fromThrowable(e), new Metadata());
            listener = new Listener<>() {};
          } finally {
            grpcContext.detach(previous);
          }
        });
    subscriber.onSubscribe(this);
    synchronized (this) {
      subscribed = true; // what the service did meanwhile (a refusal, say) may go out now
    }
    drain();
    context.onCancel(() -> cancelledBy(null)); // the caller, its deadline, the connection
    if (requests != null) {
      requests.subscribe(requestReader); // the service's request(n) from startCall is kept
    }
  }

  /** Runs a listener callback, in order, with the call's Context attached. */
  private void deliver(java.util.function.Consumer<Listener<Req>> callback) {
    callbacks.execute(
        () -> {
          Context previous = grpcContext.attach();
          try {
            callback.accept(listener);
          } finally {
            grpcContext.detach(previous);
          }
        });
  }

  /**
   * The Millrace call ended early (the caller, its deadline, the connection) or the Context's
   * deadline passed: the service hears onCancel, once, and never after it closed the call.
   */
  private void cancelledBy(Throwable cause) {
    synchronized (this) {
      if (cancelled || closeStatus != null) {
        return;
      }
      cancelled = true;
    }
    if (cause instanceof java.util.concurrent.TimeoutException) {
      // The Context's deadline, which is the Millrace call's: whichever timer fires first ends it.
      fail(io.grpc.Status.DEADLINE_EXCEEDED.withDescription("the deadline passed"));
    }
    grpcContext.cancel(cause);
    if (requestReader != null) {
      requestReader.cancel();
    }
    deliver(Listener::onCancel);
  }

  // ---- ServerCall: what the service does ----

  @Override
  public void request(int numMessages) {
    if (requests != null) {
      requestReader.request(numMessages);
      return;
    }
    synchronized (this) {
      if (singleDelivered || cancelled) {
        return;
      }
      singleDelivered = true;
    }
    Req r = singleRequest;
    deliver(l -> l.onMessage(r));
    deliver(Listener::onHalfClose);
  }

  @Override
  public void sendHeaders(Metadata headers) {
    GrpcMetadata.putAll(context.responseHeaders(), headers);
  }

  @Override
  public void sendMessage(Resp message) {
    synchronized (this) {
      if (closeStatus != null) {
        throw new IllegalStateException("sendMessage after close");
      }
      if (done) {
        return; // cancelled: grpc-java drops messages of a cancelled call too
      }
      queue.add(message);
    }
    drain();
  }

  @Override
  public boolean isReady() {
    synchronized (this) {
      return !done && closeStatus == null && demand > queue.size();
    }
  }

  @Override
  public void close(io.grpc.Status status, Metadata trailers) {
    GrpcMetadata.putAll(context.trailers(), trailers);
    synchronized (this) {
      if (closeStatus != null) {
        throw new IllegalStateException("call already closed");
      }
      closeStatus = status;
      lastTrailers = trailers;
    }
    drain();
    deliver(Listener::onComplete);
    grpcContext.removeListener(onContextCancelled);
    grpcContext.cancel(null); // grpc-java cancels a call's Context once it is over
  }

  private Metadata lastTrailers; // guarded by this

  /** Ends the Millrace call with {@code status} (the Context's deadline passed). */
  private void fail(io.grpc.Status status) {
    synchronized (this) {
      if (closeStatus != null) {
        return;
      }
      closeStatus = status;
      queue.clear();
    }
    drain();
  }

  @Override
  public boolean isCancelled() {
    return context.isCancelled();
  }

  @Override
  public io.grpc.MethodDescriptor<Req, Resp> getMethodDescriptor() {
    return method;
  }

  @Override
  public Attributes getAttributes() {
    return Attributes.EMPTY;
  }

  @Override
  public String getAuthority() {
    return null;
  }

  // ---- Subscription: the Millrace call's demand for responses ----

  @Override
  public void request(long n) {
    boolean becameReady;
    synchronized (this) {
      if (n <= 0) {
        closeStatus = io.grpc.Status.INTERNAL.withDescription("rule 3.9: request(" + n + ")");
        queue.clear();
        becameReady = false;
      } else {
        boolean wasReady = demand > queue.size();
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        becameReady = !wasReady && demand > queue.size() && closeStatus == null && !done;
      }
    }
    drain();
    if (becameReady) {
      deliver(Listener::onReady); // after startCall: the callbacks run in order
    }
  }

  @Override
  public void cancel() {
    synchronized (this) {
      done = true;
      queue.clear();
    }
    cancelledBy(null);
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
        io.grpc.Status end = null;
        Metadata trailers = null;
        synchronized (this) {
          if (done || !subscribed) {
            break;
          }
          if (demand > 0 && !queue.isEmpty()) {
            next = queue.poll();
            if (demand != Long.MAX_VALUE) {
              demand--;
            }
          } else if (closeStatus != null && queue.isEmpty()) {
            end = closeStatus;
            trailers = lastTrailers;
            done = true;
          } else {
            break;
          }
        }
        if (next != null) {
          downstream.onNext(next);
        } else if (end.isOk()) {
          downstream.onComplete();
        } else {
          downstream.onError(GrpcMetadata.fromGrpc(end, trailers).asException());
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  /** Reads a streaming call's requests as the service asks for them ({@code request(n)}). */
  private final class RequestReader implements Subscriber<Req> {
    private Subscription upstream; // guarded by HostedCall.this
    private long pending; // guarded by HostedCall.this
    private boolean stopped; // guarded by HostedCall.this

    void request(int n) {
      Subscription s;
      synchronized (HostedCall.this) {
        if (stopped) {
          return;
        }
        s = upstream;
        if (s == null) {
          pending += n;
          return;
        }
      }
      s.request(n);
    }

    void cancel() {
      Subscription s;
      synchronized (HostedCall.this) {
        stopped = true;
        s = upstream;
      }
      if (s != null) {
        s.cancel();
      }
    }

    @Override
    public void onSubscribe(Subscription s) {
      long n;
      boolean stop;
      synchronized (HostedCall.this) {
        upstream = s;
        n = pending;
        pending = 0;
        stop = stopped;
      }
      if (stop) {
        s.cancel();
      } else if (n > 0) {
        s.request(n);
      }
    }

    @Override
    public void onNext(Req message) {
      deliver(l -> l.onMessage(message));
    }

    @Override
    public void onError(Throwable t) {
      cancelledBy(t); // the caller's stream failed: the call is over for the service
    }

    @Override
    public void onComplete() {
      deliver(Listener::onHalfClose);
    }
  }
}
