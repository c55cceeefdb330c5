package io.millrace.rpc;

import io.millrace.core.PayloadEncoder;
import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.Payloads;
import io.millrace.streams.internal.Relay;
import io.millrace.streams.internal.Scalar;
import io.millrace.streams.internal.SerialSubscription;
import io.millrace.streams.internal.TakesEncoded;
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
 * <p>Ending: the first of the handler's end, a failure, the deadline or a cancel claims the end
 * (RUNNING to DECIDING, one CAS), so no other can change it afterwards and no response goes out
 * after it. A trailer is one more payload, so it waits for demand; the handler has ended by then,
 * or the deadline cancelled it and the claim stopped its responses.
 *
 * <p>The deadline timer is the one signal source besides the handler. When a call has a deadline, a
 * response's emission and the claim of the end hold a lock, so that no response is signalled while
 * the timer ends the call. A message that needs a buffer of its own is serialized before the lock
 * is taken, but what the sink does within the emission runs under it: on the event loop, writing
 * the message into the frame and asking the handler's Publisher for more. Calls without a deadline
 * pay nothing for it.
 */
final class ResponsePublisher<Resp>
    implements Publisher<Payload>, Subscriber<Resp>, Subscription, Relay.Target {
  private static final System.Logger LOG = System.getLogger(ResponsePublisher.class.getName());

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
  private final PayloadEncoder<Resp> encoder; // null: messages are serialized when emitted
  private final boolean unary;
  private final boolean routing;
  private final ByteBufAllocator alloc;
  private final Publisher<Resp> source;
  private final boolean serialized;
  private final Runnable whenDone;

  private final SerialSubscription upstream = new SerialSubscription();

  private Subscriber<? super Payload> downstream;

  /**
   * Set once the subscriber's onSubscribe has returned: the end is sent only after (rule 1.3), by
   * {@link #tryEnd}. Written as the answer is subscribed (a handler executor's thread, perhaps) and
   * read by {@code tryEnd} on the loop after a deadline's expiry: each side writes its part (this,
   * or the state), then reads the other's, so at least one of them sends the end.
   */
  private volatile boolean onSubscribeReturned;

  /**
   * The downstream, when it takes a stream's responses as their parts ({@link TakesEncoded}): a
   * response that goes straight out then makes no payload. Null for unary calls (their one answer
   * goes another way) and other subscribers.
   */
  private TakesEncoded takesEncoded;

  private volatile long requested;
  private long emitted;
  private volatile int state;
  private volatile Payload endPayload; // the trailer, when the end needs one
  private volatile Throwable endError; // routing callers: the ERROR to send
  private volatile ScheduledFuture<?> deadlineTimer;

  /**
   * {@code whenDone} runs once the call has ended either way (a channel's server cancels the
   * caller's request stream then, as gRPC closes the call).
   */
  ResponsePublisher(
      ServerContext context,
      Marshaller<Resp> marshaller,
      boolean unary,
      boolean routing,
      ByteBufAllocator alloc,
      Publisher<Resp> source,
      Runnable whenDone) {
    this.context = context;
    this.marshaller = marshaller;
    this.encoder = marshaller == null ? null : marshaller.encoder();
    this.unary = unary;
    this.routing = routing;
    this.alloc = alloc;
    this.source = source;
    this.serialized = context.hasDeadline();
    this.whenDone = whenDone;
  }

  /** A call that failed before its handler ran. */
  static <Resp> ResponsePublisher<Resp> failed(
      ServerContext context,
      boolean routing,
      ByteBufAllocator alloc,
      Status status,
      Runnable whenDone) {
    ResponsePublisher<Resp> p =
        new ResponsePublisher<>(context, null, true, routing, alloc, null, whenDone);
    if (p.claimEnd()) {
      p.finishEnd(status, true);
    }
    return p;
  }

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (downstream != null) {
      Publishers.refuseSecond(subscriber, "responses have");
      return;
    }
    downstream = subscriber;
    takesEncoded = !unary && subscriber instanceof TakesEncoded t ? t : null;
    subscriber.onSubscribe(this);
    onSubscribeReturned = true;
    if (source != null && state == RUNNING) {
      if (unary && Scalar.is(source)) {
        answerAtOnce();
      } else {
        try {
          source.subscribe(this);
        } catch (RuntimeException e) { // a Publisher that breaks rule 1.9
          onError(e);
        }
      }
    } else if (source != null) {
      // Ended before it was subscribed (its deadline passed while an interceptor or the handler's
      // method ran, or the caller cancelled): the interceptors' wrappers still see it end, as
      // cancelled, so that a metric or a log of theirs counts it (and an observer handler sees
      // the call cancelled).
      try {
        Payloads.cancelUnread(source);
      } catch (RuntimeException e) { // a Publisher that breaks rule 1.9: the call has ended anyway
        LOG.log(System.Logger.Level.DEBUG, "a handler's answer threw as it was cancelled", e);
      }
    }
    tryEnd(); // an end decided before the subscriber came
  }

  /**
   * A unary handler that answered at once ({@link Scalar}): its answer is taken without a
   * subscription when the caller's demand has come (the engine asks in onSubscribe), or on the
   * first request; on the handler's own thread when that is not the event loop.
   */
  private void answerAtOnce() {
    if (requested > 0) {
      Scalar.signal(source, this); // a unary response ends the call: the completion is a no-op
      return;
    }
    // Off the event loop (a handler executor's thread), the answer is taken here and now: its code
    // (a Mono.fromCallable that blocks, say) must not run on the loop when the caller asks.
    Publisher<Resp> answer = context.loop().inEventLoop() ? source : Scalar.taken(source);
    upstream.set(
        new Subscription() {
          private boolean taken;

          @Override
          public void request(long n) {
            if (!taken) {
              taken = true;
              Scalar.signal(answer, ResponsePublisher.this);
            }
          }

          @Override
          public void cancel() {
            taken = true;
          }
        });
  }

  /** Starts the deadline on {@code timers}; expiry ends the call with DEADLINE_EXCEEDED. */
  void startDeadline(ScheduledExecutorService timers) {
    long left = context.deadlineNanos() - System.nanoTime();
    if (left <= 0) {
      expire();
      return;
    }
    try {
      deadlineTimer = timers.schedule(this::expire, left, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException loopGone) {
      expire(); // the connection is gone with its loop: nothing will take the answer
    }
  }

  /**
   * The timer of a watch that began while the handler's method ran on a handler executor
   * (ServerHandler): cancelled when the call ends, as the answer's own would be; it calls {@link
   * #expire} when it goes off.
   */
  void adoptDeadline(ScheduledFuture<?> timer) {
    deadlineTimer = timer;
  }

  /** The deadline passed: the call ends with DEADLINE_EXCEEDED, unless it has ended. Any thread. */
  void expire() {
    boolean claimed;
    synchronized (this) { // no response is being signalled while the end is claimed
      claimed = claimEnd();
    }
    if (!claimed) {
      return;
    }
    context.cancel(Status.DEADLINE_EXCEEDED);
    upstream.cancel();
    // The handler may still be writing its headers and trailers on its own thread: not read here.
    finishEnd(Status.DEADLINE_EXCEEDED.withMessage("the deadline passed on the server"), false);
    tryEnd();
  }

  // ------------------------------------------------------------------ from the handler

  @Override
  public void onSubscribe(Subscription s) {
    upstream.set(java.util.Objects.requireNonNull(s, "subscription (rule 2.13)"));
  }

  @Override
  public void onNext(Resp value) {
    if (value == null) { // the call fails, and the handler's Publisher is told (rule 2.13)
      NullPointerException e = new NullPointerException("a handler emitted null (rule 2.13)");
      upstream.cancel();
      onError(e);
      throw e;
    }
    if (state != RUNNING) {
      return; // after the end was claimed (deadline, failure, second unary response): dropped
    }
    // A stream's response small enough for the frame goes to a sink that takes it as its parts
    // with no payload made (direct non-null, metadata the response's own); any other as a payload.
    TakesEncoded direct = takesEncoded;
    ByteBuf metadata = null;
    Payload payload = null;
    try {
      boolean inFrame = encodesInFrame(encoder, value);
      if (direct != null && inFrame) {
        metadata = routing ? null : responseMetadata(context, alloc, emitted == 0, false);
      } else {
        direct = null;
        payload =
            response(
                context, marshaller, encoder, routing, alloc, value, inFrame, emitted == 0, unary);
      }
    } catch (RuntimeException e) {
      upstream.cancel();
      onError(e);
      return;
    }
    if (serialized) {
      synchronized (this) {
        emit(direct, metadata, value, payload);
      }
    } else {
      emit(direct, metadata, value, payload);
    }
  }

  private void emit(TakesEncoded direct, ByteBuf metadata, Resp value, Payload payload) {
    if (direct != null) {
      sendEncoded(direct, metadata, value);
    } else {
      emit(payload);
    }
  }

  /** {@link #emit} of a stream's response as its parts: the same checks, no payload. */
  private void sendEncoded(TakesEncoded direct, ByteBuf metadata, Resp value) {
    if (state != RUNNING) {
      if (metadata != null) {
        metadata.release();
      }
      return;
    }
    emitted++;
    direct.onNextEncoded(metadata, value, encoder);
  }

  /**
   * A response's payload: the message, with the handler's response headers when {@code first} and
   * its trailers and an OK status when {@code last} (a unary response ends the call), unless the
   * caller routes (no metadata then).
   */
  static <Resp> Payload response(
      ServerContext context,
      Marshaller<Resp> marshaller,
      PayloadEncoder<Resp> encoder,
      boolean routing,
      ByteBufAllocator alloc,
      Resp value,
      boolean first,
      boolean last) {
    return response(
        context,
        marshaller,
        encoder,
        routing,
        alloc,
        value,
        encodesInFrame(encoder, value),
        first,
        last);
  }

  /** {@link #response} of a value whose {@link #encodesInFrame} is known: {@code inFrame}. */
  private static <Resp> Payload response(
      ServerContext context,
      Marshaller<Resp> marshaller,
      PayloadEncoder<Resp> encoder,
      boolean routing,
      ByteBufAllocator alloc,
      Resp value,
      boolean inFrame,
      boolean first,
      boolean last) {
    ByteBuf data = inFrame ? null : marshaller.serialize(value, alloc);
    if (routing) {
      return data == null ? Payload.encoded(null, value, encoder) : Payload.of(data);
    }
    ByteBuf metadata;
    try {
      metadata = responseMetadata(context, alloc, first, last);
    } catch (Throwable t) { // an Error too (out of direct memory): the message is not leaked
      if (data != null) {
        data.release();
      }
      throw t;
    }
    return data == null ? Payload.encoded(metadata, value, encoder) : Payload.of(metadata, data);
  }

  /**
   * A response's metadata for a native caller: the handler's response headers when {@code first},
   * its trailers and an OK status when {@code last}; null when there is neither.
   */
  static ByteBuf responseMetadata(
      ServerContext context, ByteBufAllocator alloc, boolean first, boolean last) {
    Headers headers = first ? context.takeResponseHeaders() : null;
    Headers trailers = last ? context.trailersOrNull() : null;
    if (headers == null && trailers == null) {
      return null;
    }
    ByteBuf metadata = alloc.buffer();
    try {
      ResponseMetadata.encode(metadata, headers, trailers != null ? Status.OK : null, trailers);
    } catch (RuntimeException e) {
      metadata.release();
      throw e;
    }
    return metadata;
  }

  /**
   * Whether {@code value} is left to {@code encoder} to write straight into the frame that carries
   * it (later, on the event loop): a message small enough for the frame batch. A longer one would
   * get a buffer of its own there anyway, so it is serialized at once, on the emitting thread (a
   * handler executor's, say), not on the loop.
   */
  static <T> boolean encodesInFrame(PayloadEncoder<T> encoder, T value) {
    return encoder != null && encoder.length(value) <= PayloadEncoder.IN_FRAME_MAX_BYTES;
  }

  /** A message without metadata, as {@link #encodesInFrame} says. */
  static <T> Payload message(Marshaller<T> marshaller, T value, ByteBufAllocator alloc) {
    PayloadEncoder<T> encoder = marshaller.encoder();
    return encodesInFrame(encoder, value)
        ? Payload.encoded(null, value, encoder)
        : Payload.of(marshaller.serialize(value, alloc));
  }

  private void emit(Payload payload) {
    if (unary) {
      if (!STATE.compareAndSet(this, RUNNING, DONE)) { // the response ends a unary call
        payload.release();
        return;
      }
      emitted++;
      cancelTimer();
      downstream.onNext(payload);
      downstream.onComplete();
      whenDone.run();
      return;
    }
    if (state != RUNNING) {
      payload.release();
      return;
    }
    emitted++;
    downstream.onNext(payload);
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) { // the call fails all the same, and the handler's Publisher is told
      NullPointerException e = new NullPointerException("onError(null) (rule 2.13)");
      onError(e);
      throw e;
    }
    if (claimEndSerialized()) {
      finishEnd(context.failure(t), true);
      tryEnd();
    }
  }

  @Override
  public void onComplete() {
    if (claimEndSerialized()) {
      finishEnd(
          unary && emitted == 0
              ? Status.INTERNAL.withMessage("the handler completed without a response")
              : Status.OK,
          true);
      tryEnd();
    }
  }

  private boolean claimEndSerialized() {
    if (serialized) {
      synchronized (this) {
        return claimEnd();
      }
    }
    return claimEnd();
  }

  /** Claims the end of the call; false when another end (or a cancel) came first. */
  private boolean claimEnd() {
    return STATE.compareAndSet(this, RUNNING, DECIDING);
  }

  /**
   * Writes how the claimed call ends: a trailer, an ERROR for routing callers, or a plain
   * completion; with {@code fromHandler} false the handler's headers and trailers are not read
   * (another thread may be writing them). A cancel that came meanwhile wins: the trailer made is
   * released.
   */
  private void finishEnd(Status status, boolean fromHandler) {
    Payload trailer = null;
    if (routing) {
      endError = status.isOk() ? null : StreamErrorException.application(status.toString());
    } else {
      Headers trailers = fromHandler ? context.trailersOrNull() : null;
      if (!status.isOk() || trailers != null) {
        trailer = trailer(context, alloc, status, trailers, fromHandler && emitted == 0);
      }
    }
    endPayload = trailer;
    if (!STATE.compareAndSet(this, DECIDING, ENDING) && trailer != null) {
      endPayload = null; // cancelled meanwhile
      trailer.release();
    }
  }

  /**
   * The payload that ends a call with {@code status} and {@code trailers}, and the response headers
   * when {@code withHeaders} (no response carried them).
   */
  static Payload trailer(
      ServerContext context,
      ByteBufAllocator alloc,
      Status status,
      Headers trailers,
      boolean withHeaders) {
    ByteBuf metadata = alloc.buffer();
    try {
      Headers headers = withHeaders ? context.takeResponseHeaders() : null;
      ResponseMetadata.encode(metadata, headers, status, trailers, true);
    } catch (RuntimeException e) {
      // Headers or trailers that cannot be written (changed while read): the status alone.
      metadata.clear();
      ResponseMetadata.encode(metadata, null, status, null, true);
    }
    return Payload.of(metadata, Unpooled.EMPTY_BUFFER);
  }

  /** Sends the decided end when it can go: now, or when demand comes for a trailer. */
  private void tryEnd() {
    if (state != ENDING || !onSubscribeReturned) {
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
    whenDone.run();
  }

  // ------------------------------------------------------------------ from the caller's side

  @Override
  public void request(long n) {
    if (n <= 0) {
      upstream.cancel();
      if (claimEndSerialized()) {
        finishEnd(
            Status.INTERNAL.withMessage("request-n must be positive (rule 3.9): " + n), false);
        STATE.set(this, DONE);
        cancelTimer();
        Payload p = endPayload;
        if (p != null) {
          endPayload = null;
          p.release();
        }
        downstream.onError(
            new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
        whenDone.run();
      }
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
    takesEncoded = null;
    downstream = Publishers.CANCELLED; // rule 3.13
    cancelTimer();
    Payload trailer = endPayload;
    if (was == ENDING && trailer != null) { // the end was decided and not sent: this side owns it
      endPayload = null;
      trailer.release();
    }
    if (was != DONE) {
      context.cancel(Status.CANCELLED);
      whenDone.run();
    }
    upstream.cancel();
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
    }
  }
}
