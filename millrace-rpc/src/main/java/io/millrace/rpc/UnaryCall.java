package io.millrace.rpc;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Failures;
import io.millrace.streams.internal.OneCall;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

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
 * one signals the subscriber, so signals never overlap. Signals after onSubscribe come from the
 * event loop (a call that could not be sent is failed there too), except: the failure of an invalid
 * request(n), from the thread that asked (or the subscribing thread, once onSubscribe returns); a
 * deadline already past, on the subscribing thread; and any failure once the loop has shut down, on
 * the thread that found it so. The start handshake is {@link OneCall}'s.
 */
final class UnaryCall<Req, Resp> extends OneCall implements Publisher<Resp>, StreamListener {
  private final RpcClient client; // and through it the connection (no field: 56 bytes, not 64)
  private final MethodDescriptor<Req, Resp> method;
  private final Req request;
  private final CallOptions options;

  private Subscriber<? super Resp> downstream;

  private volatile ScheduledFuture<?> deadlineTimer;

  /** Set by an end that must cancel the stream (cancel, deadline) before it looks for it. */
  private volatile boolean cancelWanted;

  UnaryCall(
      RpcClient client, MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    this.client = client;
    this.method = method;
    this.request = request;
    this.options = options;
  }

  private Connection connection() {
    return client.connection();
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!STATE.compareAndSet(this, NEW, IDLE)) {
      // Each subscription is its own call.
      new UnaryCall<>(client, method, request, options).subscribe(subscriber);
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
    onSubscribeThenStart(subscriber);
  }

  /** Sends the request, once; the subscriber has asked and its onSubscribe has returned. */
  @Override
  protected void start() {
    if (!STATE.compareAndSet(this, IDLE, STARTED)) {
      return; // started already, or ended before it started
    }
    long deadlineNanos = -1;
    Connection connection = connection();
    Stream s;
    try {
      if (options.timeout() != null) {
        // (saturates: a deadline beyond ~292 years is the longest, where toNanos() would throw)
        deadlineNanos = TimeUnit.NANOSECONDS.convert(options.timeout());
      }
      s = client.sendUnary(connection, method, request, options, this);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // Not sent: a message that would not serialize, a full hand-off, a closed connection. Told
      // on the event loop, as every other end of the call is.
      if (STATE.compareAndSet(this, STARTED, DONE)) {
        StatusException failure = ResponseReader.statusOf(e).asException();
        onLoop(() -> downstream.onError(failure), true);
      }
      return;
    }
    sent(s, connection.executor());
    if (deadlineNanos >= 0) {
      try {
        deadlineTimer = connection.executor().schedule(this::expire, deadlineNanos, NANOSECONDS);
      } catch (RejectedExecutionException loopGone) {
        return; // the loop has shut down: the connection, and this call with it, failed
      }
      if (state == DONE) {
        cancelTimer(); // ended while the timer was being set
      }
    }
    if (cancelWanted) {
      cancelStream(); // cancelled meanwhile, before the stream was known
    }
  }

  /**
   * Runs {@code task} on the event loop (here, when this is the loop); when the loop has shut down
   * it runs here if {@code orHere}, else not at all.
   */
  private void onLoop(Runnable task, boolean orHere) {
    EventExecutor loop = connection().executor();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (RejectedExecutionException loopGone) {
      if (orHere) {
        task.run();
      }
    }
  }

  @Override
  public void cancel() {
    int was = STATE.getAndSet(this, DONE);
    downstream = Publishers.CANCELLED; // rule 3.13: a signal already on its way is dropped there
    if (was == STARTED) {
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
  @Override
  protected void fail(Throwable error, boolean cancel) {
    int was;
    do {
      was = state;
      if (was == DONE) {
        return;
      }
    } while (!STATE.compareAndSet(this, was, DONE));
    try {
      cancelTimer();
      if (cancel && was == STARTED) {
        cancelWanted = true;
        cancelStream();
      }
    } finally {
      downstream.onError(error);
    }
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
    }
  }

  /**
   * Cancels the stream on the event loop (a no-op once it has ended, or with the loop gone). The
   * call has started; off the loop, a stream not seen yet is looked for again by a task there.
   */
  private void cancelStream() {
    Stream s = streamOrLookAgain(connection().executor(), this::cancelStream);
    if (s == null) {
      return; // a start still under way sees the wish and cancels by itself
    }
    onLoop(s::cancel, false);
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
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      fail(e instanceof StatusException se ? se : Status.fromThrowable(e).asException(), false);
      return;
    }
    if (value == null) {
      return; // a trailer alone: the completion tells the call ended without a response
    }
    if (STATE.compareAndSet(this, STARTED, DONE)) {
      cancelTimer();
      Subscriber<? super Resp> d = downstream;
      try {
        d.onNext(value);
      } catch (Throwable e) {
        Failures.throwIfFatal(e);
        // The subscriber's onNext threw (rule 2.13 forbids it): told instead of the completion.
        d.onError(ResponseReader.statusOf(e).asException());
        return;
      }
      d.onComplete();
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
