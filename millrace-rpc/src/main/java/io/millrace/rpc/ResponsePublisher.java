package io.millrace.rpc;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The server side of one call: subscribes to the handler's responses and emits them as payloads,
 * then the end of the call. Native callers get the response headers on the first payload and a
 * trailer (status, trailers) when there is something to say: a failure, or trailers; routing
 * callers get plain payloads and ERROR[APPLICATION_ERROR] "CODE: message" on failure.
 *
 * <p>Demand passes through to the handler's Publisher. A trailer is one more payload, so it waits
 * for demand; the handler has ended by then, so it cannot race a response. The deadline timer is
 * the one signal source besides the handler: when a call has a deadline, emissions are serialized
 * with a lock (calls without one pay nothing for it).
 */
final class ResponsePublisher<Resp> implements Publisher<Payload>, Subscriber<Resp>, Subscription {
  private static final int RUNNING = 0;
  private static final int DECIDING = 1; // one thread is writing how the call ends
  private static final int ENDING = 2; // the end is decided and may wait for demand
  private static final int DONE = 3;

  private static final AtomicIntegerFieldUpdater<ResponsePublisher<?>> STATE = newStateUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicIntegerFieldUpdater<ResponsePublisher<?>> newStateUpdater() {
    return (AtomicIntegerFieldUpdater)
        AtomicIntegerFieldUpdater.newUpdater(ResponsePublisher.class, "state");
  }

  private final ServerContext context;
  private final Marshaller<Resp> marshaller;
  private final boolean unary;
  private final boolean routing;
  private final ByteBufAllocator alloc;
  private final Publisher<Resp> source;
  private final boolean serialized;

  private final DeferredSubscription upstream = new DeferredSubscription();
  private Subscriber<? super Payload> downstream;
  private volatile long requested;
  private long emitted;
  private volatile int state;
  private volatile Payload endPayload; // the trailer, when the end needs one
  private volatile Throwable endError; // routing callers: the ERROR to send
  private ScheduledFuture<?> deadlineTimer;

  ResponsePublisher(
      ServerContext context,
      Marshaller<Resp> marshaller,
      boolean unary,
      boolean routing,
      ByteBufAllocator alloc,
      Publisher<Resp> source) {
    this.context = context;
    this.marshaller = marshaller;
    this.unary = unary;
    this.routing = routing;
    this.alloc = alloc;
    this.source = source;
    this.serialized = context.hasDeadline();
  }

  /** A call that failed before its handler ran. */
  static <Resp> ResponsePublisher<Resp> failed(
      ServerContext context, boolean routing, ByteBufAllocator alloc, Status status) {
    ResponsePublisher<Resp> p = new ResponsePublisher<>(context, null, true, routing, alloc, null);
    p.decideEnd(status);
    return p;
  }

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (downstream != null) {
      subscriber.onSubscribe(
          new Subscription() {
            @Override
            public void request(long n) {}

            @Override
            public void cancel() {}
          });
      subscriber.onError(new IllegalStateException("a call's responses have one subscriber"));
      return;
    }
    downstream = subscriber;
    subscriber.onSubscribe(this);
    if (source != null && state == RUNNING) {
      source.subscribe(this);
    }
    tryEnd(); // an end decided before the subscriber came
  }

  /** Starts the deadline on {@code timers}; expiry ends the call with DEADLINE_EXCEEDED. */
  void startDeadline(ScheduledExecutorService timers) {
    long left = context.deadlineNanos() - System.nanoTime();
    if (left <= 0) {
      expire();
      return;
    }
    deadlineTimer = timers.schedule(this::expire, left, TimeUnit.NANOSECONDS);
  }

  private void expire() {
    if (state != RUNNING) {
      return;
    }
    context.cancel(Status.DEADLINE_EXCEEDED);
    cancelUpstream();
    synchronized (this) {
      decideEnd(Status.DEADLINE_EXCEEDED.withMessage("the deadline passed on the server"));
    }
    tryEnd();
  }

  // ------------------------------------------------------------------ from the handler

  @Override
  public void onSubscribe(Subscription s) {
    upstream.set(s);
  }

  @Override
  public void onNext(Resp value) {
    if (serialized) {
      synchronized (this) {
        emit(value);
      }
    } else {
      emit(value);
    }
  }

  private void emit(Resp value) {
    if (state != RUNNING) {
      return; // after a deadline, or a second unary response: dropped
    }
    if (value == null) {
      onError(new NullPointerException("a handler emitted null"));
      return;
    }
    ByteBuf data;
    try {
      data = marshaller.serialize(value, alloc);
    } catch (RuntimeException e) {
      cancelUpstream();
      decideEnd(Status.fromThrowable(e));
      tryEnd();
      return;
    }
    ByteBuf metadata = null;
    if (!routing) {
      Headers headers = emitted == 0 ? context.takeResponseHeaders() : null;
      Headers trailers = unary ? context.trailersOrNull() : null;
      if (headers != null || trailers != null) {
        metadata = alloc.buffer();
        ResponseMetadata.encode(metadata, headers, trailers != null ? Status.OK : null, trailers);
      }
    }
    emitted++;
    if (unary) {
      if (!STATE.compareAndSet(this, RUNNING, DONE)) { // the response ends a unary call
        data.release();
        if (metadata != null) {
          metadata.release();
        }
        return;
      }
      cancelTimer();
      downstream.onNext(Payload.of(metadata, data));
      downstream.onComplete();
      return;
    }
    downstream.onNext(Payload.of(metadata, data));
  }

  @Override
  public void onError(Throwable t) {
    synchronized (this) {
      decideEnd(Status.fromThrowable(t));
    }
    tryEnd();
  }

  @Override
  public void onComplete() {
    synchronized (this) {
      if (unary && emitted == 0) {
        decideEnd(Status.INTERNAL.withMessage("the handler completed without a response"));
      } else {
        decideEnd(Status.OK);
      }
    }
    tryEnd();
  }

  /**
   * Decides how the call ends: the first decision wins, and a cancel that comes while it is being
   * written wins over it (the decider then releases what it made).
   */
  private void decideEnd(Status status) {
    if (!STATE.compareAndSet(this, RUNNING, DECIDING)) {
      return;
    }
    Headers trailers = context.trailersOrNull();
    Payload trailer = null;
    if (routing) {
      endError = status.isOk() ? null : StreamErrorException.application(status.toString());
    } else if (!status.isOk() || trailers != null) {
      ByteBuf metadata = alloc.buffer();
      Headers headers = emitted == 0 ? context.takeResponseHeaders() : null;
      ResponseMetadata.encode(metadata, headers, status, trailers, true);
      trailer = Payload.of(metadata, Unpooled.EMPTY_BUFFER);
    }
    endPayload = trailer;
    if (!STATE.compareAndSet(this, DECIDING, ENDING) && trailer != null) {
      endPayload = null; // cancelled meanwhile
      trailer.release();
    }
  }

  /** Sends the decided end when it can go: now, or when demand comes for a trailer. */
  private void tryEnd() {
    if (state != ENDING || downstream == null) {
      return;
    }
    Payload trailer = endPayload;
    if (trailer != null && requested <= emitted) {
      return; // waits for demand
    }
    if (!STATE.compareAndSet(this, ENDING, DONE)) {
      return;
    }
    cancelTimer();
    if (trailer != null) {
      endPayload = null;
      downstream.onNext(trailer);
      downstream.onComplete();
    } else if (endError != null) {
      downstream.onError(endError);
    } else {
      downstream.onComplete();
    }
  }

  // ------------------------------------------------------------------ from the caller's side

  @Override
  public void request(long n) {
    if (n <= 0) {
      cancel();
      downstream.onError(new IllegalArgumentException("request-n must be positive: " + n));
      return;
    }
    synchronized (this) {
      long r = requested + n;
      requested = r < 0 ? Long.MAX_VALUE : r;
    }
    if (state == RUNNING) {
      upstream.request(n);
    }
    tryEnd();
  }

  @Override
  public void cancel() {
    int was = STATE.getAndSet(this, DONE);
    cancelTimer();
    Payload trailer = endPayload;
    if (was == ENDING && trailer != null) { // the end was decided and not sent: this side owns it
      endPayload = null;
      trailer.release();
    }
    if (was != DONE) {
      context.cancel(Status.CANCELLED);
    }
    cancelUpstream();
  }

  private void cancelUpstream() {
    upstream.cancel();
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
    }
  }
}
