package io.millrace.rpc;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A unary call in one object: the Publisher of its one response, its subscriber's Subscription and
 * the engine's listener of the request-response, so that a call costs one object here where the
 * general path ({@link ResponseReader} over the streams layer) costs a reader, a request Publisher
 * and the payloads between them. The response is parsed straight from the engine's receive buffers
 * inside the engine's callback.
 *
 * <p>Each subscription is a call of its own (a second subscriber gets a fresh object), so retry and
 * repeat call again. The request goes out on the first request(n) once {@code onSubscribe} has
 * returned (Reactive Streams rule 1.3: no signal before it), from the requesting thread through the
 * connection's hand-off when that is not the event loop.
 *
 * <p>Ending: the response, a failure from the server or the connection, the deadline, a cancel or
 * an invalid request(n), whichever comes first, claims the end through one atomic state; only that
 * one signals the subscriber, so signals never overlap. Every signal after onSubscribe comes from
 * the event loop, except the failure of an invalid request(n) or of a call that could not be sent,
 * which come from the requesting thread before anything else could.
 */
final class UnaryCall<Req, Resp> implements Publisher<Resp>, Subscription, StreamListener {
  private static final int IDLE = 0;
  private static final int STARTED = 1;
  private static final int DONE = 2;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryCall> STATE =
      AtomicIntegerFieldUpdater.newUpdater(UnaryCall.class, "state");

  private final RpcClient client;
  private final Connection connection;
  private final MethodDescriptor<Req, Resp> method;
  private final Req request;
  private final CallOptions options;

  private Subscriber<? super Resp> downstream;
  private volatile int state = IDLE;
  private volatile boolean onSubscribeReturned;
  private volatile boolean requested;
  private volatile Stream stream;
  private volatile ScheduledFuture<?> deadlineTimer;

  /** Set by an end that must cancel the stream (cancel, deadline) before it looks for it. */
  private volatile boolean cancelWanted;

  UnaryCall(
      RpcClient client,
      Connection connection,
      MethodDescriptor<Req, Resp> method,
      Req request,
      CallOptions options) {
    this.client = client;
    this.connection = connection;
    this.method = method;
    this.request = request;
    this.options = options;
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (downstream != null) {
      new UnaryCall<>(client, connection, method, request, options).subscribe(subscriber);
      return;
    }
    downstream = subscriber;
    if (options.timeout() != null && options.timeout().isZero()) {
      state = DONE;
      subscriber.onSubscribe(this);
      subscriber.onError(
          Status.DEADLINE_EXCEEDED
              .withMessage("the deadline passed before the call")
              .asException());
      return;
    }
    subscriber.onSubscribe(this);
    onSubscribeReturned = true;
    if (requested) {
      start();
    }
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      fail(new IllegalArgumentException("request-n must be positive: " + n), true); // rule 3.9
      return;
    }
    requested = true;
    if (onSubscribeReturned) {
      start();
    }
  }

  /** Sends the request, once; the subscriber has asked and its onSubscribe has returned. */
  private void start() {
    if (!STATE.compareAndSet(this, IDLE, STARTED)) {
      return; // started already, or ended before it started
    }
    Stream s;
    try {
      s = client.sendUnary(connection, method, request, options, this);
    } catch (RuntimeException e) {
      // Not sent (a message that would not serialize, a full hand-off, a closed connection).
      if (STATE.compareAndSet(this, STARTED, DONE)) {
        downstream.onError(ResponseReader.statusOf(e).asException());
      }
      return;
    }
    stream = s;
    if (options.timeout() != null) {
      deadlineTimer =
          connection
              .executor()
              .schedule(this::expire, options.timeout().toNanos(), TimeUnit.NANOSECONDS);
      if (state == DONE) {
        cancelTimer(); // ended while the timer was being set
      }
    }
    if (cancelWanted) {
      cancelStream(); // cancelled meanwhile, before the stream was known
    }
  }

  @Override
  public void cancel() {
    if (STATE.getAndSet(this, DONE) == STARTED) {
      cancelTimer();
      cancelWanted = true;
      cancelStream();
    }
  }

  private void expire() {
    if (state == DONE) {
      return;
    }
    fail(
        Status.DEADLINE_EXCEEDED
            .withMessage("the deadline of " + options.timeout() + " passed")
            .asException(),
        true);
  }

  /** Ends the call with {@code error} if nothing ended it before; {@code cancel} cancels it too. */
  private void fail(Throwable error, boolean cancel) {
    int was;
    do {
      was = state;
      if (was == DONE) {
        return;
      }
    } while (!STATE.compareAndSet(this, was, DONE));
    cancelTimer();
    if (cancel && was == STARTED) {
      cancelWanted = true;
      cancelStream();
    }
    downstream.onError(error);
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
    }
  }

  /** Cancels the stream on the event loop (a no-op once it has ended). */
  private void cancelStream() {
    Stream s = stream;
    if (s == null) {
      return; // start() cancels it once it has it
    }
    if (connection.executor().inEventLoop()) {
      s.cancel();
    } else {
      connection.executor().execute(s::cancel);
    }
  }

  // ------------------------------------------------------------------ StreamListener (loop)

  @Override
  public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
    if (state != STARTED) {
      return; // ended meanwhile (the engine releases the buffers)
    }
    Resp value;
    try {
      value = read(metadata, data);
    } catch (RuntimeException e) {
      fail(e instanceof StatusException se ? se : Status.fromThrowable(e).asException(), false);
      return;
    }
    if (value == null) {
      return; // a trailer alone: the completion tells the call ended without a response
    }
    if (STATE.compareAndSet(this, STARTED, DONE)) {
      cancelTimer();
      downstream.onNext(value);
      downstream.onComplete();
    }
  }

  /** The response a payload carries, or null when it carries none (a trailer alone). */
  private Resp read(ByteBuf metadata, ByteBuf data) {
    if (metadata != null && !client.routes()) {
      int read = ResponseReader.readMetadata(metadata, false, options, client.maxHeaderBytes());
      if ((read & ResponseReader.NO_MESSAGE) != 0) {
        return null;
      }
    }
    return method.responseMarshaller().parse(data);
  }

  @Override
  public void onComplete(Stream s) {
    if (state != STARTED) {
      return; // answered: the completion that follows a response (no exception made for it)
    }
    fail(Status.INTERNAL.withMessage("the call ended without a response").asException(), false);
  }

  @Override
  public void onError(Stream s, int errorCode, String message) {
    if (state != STARTED) {
      return;
    }
    fail(
        ResponseReader.statusOf(StreamErrorException.received(errorCode, message)).asException(),
        false);
  }
}
