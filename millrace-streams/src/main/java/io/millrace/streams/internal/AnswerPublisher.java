package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Failures;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A request-response from this side in one object: the Publisher of its one answer, its
 * subscriber's Subscription and the engine's listener of the call.
 *
 * <p>Why not a {@link RequestPublisher}: that carries a bounded stream's state (queue, prefetch,
 * credit and size accounting, about 30 fields, some 127 bytes) and schedules a drain task on the
 * loop for a call made from another thread, where a request-response needs neither credit nor a
 * queue: its one answer is asked for by the request itself. This one is about 48 bytes, and a call
 * that is answered costs the loop nothing beyond the connection's hand-off.
 *
 * <p>Start. The request goes out on the first request(n) once {@code onSubscribe} has returned
 * (Reactive Streams rule 1.3), from the requesting thread through the connection's hand-off when
 * that is not the event loop (a burst of calls from one thread costs one wake-up of the loop).
 *
 * <p>Ending. The answer, the peer's completion without one (an empty answer), a failure from the
 * peer or the connection, a cancel or an invalid request(n), whichever comes first, claims the end
 * through one atomic state; only that one signals the subscriber, so signals never overlap. The
 * answer is delivered and completed inside the engine's callback (onComplete follows onNext even
 * when the subscriber cancels inside onNext: the call has ended by then). Every signal after {@code
 * onSubscribe} comes from the event loop, except when the loop has shut down: then from the thread
 * that found it so (the caller, or another caller draining the connection's hand-off).
 *
 * <p>Ownership. The request payload is the connection's once sent, and released here when the call
 * ends before it is sent (cancelled, or an invalid request(n)). The answer is the subscriber's own
 * (a heap copy, or retained views with {@link StreamsOptions#zeroCopy()}), except for a {@link
 * ReadsInPlace} subscriber, which is lent the engine's buffers for the duration of its onNext.
 */
public final class AnswerPublisher extends OneCall implements Publisher<Payload>, StreamListener {
  private final Connection connection;
  private final boolean zeroCopy;

  /** The request until it is sent, or released unsent. */
  private Payload request;

  /**
   * Written before onSubscribe; read by whoever claims the end (the hand-off, or the state's atomic
   * update, orders it before). Dropped by a cancel, which signals nothing (rule 3.13).
   */
  private Subscriber<? super Payload> downstream;

  /** Whether the subscriber {@link ReadsInPlace} or {@link ReadsBuffersInPlace}. */
  private boolean lends;

  private boolean readsBuffers;

  private volatile boolean cancelWanted;

  /**
   * Whether the CANCEL was asked of the loop: once, whichever of start, cancel and cancel's task on
   * the loop finds both the stream and the wish first.
   */
  @SuppressWarnings("unused") // through CANCEL_SENT
  private volatile boolean cancelSent;

  private static final VarHandle CANCEL_SENT;

  static {
    try {
      CANCEL_SENT =
          MethodHandles.lookup().findVarHandle(AnswerPublisher.class, "cancelSent", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private AnswerPublisher(Connection connection, StreamsOptions options, Payload request) {
    this.connection = connection;
    this.zeroCopy = options.zeroCopy();
    this.request = request;
  }

  public static AnswerPublisher of(Connection connection, StreamsOptions options, Payload request) {
    return new AnswerPublisher(connection, options, request);
  }

  // ------------------------------------------------------------------ Publisher, Subscription

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!STATE.compareAndSet(this, NEW, IDLE)) {
      subscriber.onSubscribe(NoopSubscription.INSTANCE);
      subscriber.onError(FireAndForgetPublisher.subscribedTwice());
      return;
    }
    lends = ReadsInPlace.check(subscriber);
    // Asked only of those: a subscriber of an application's is tested against one interface, not
    // two (a type check that fails scans all of its class's interfaces).
    readsBuffers = lends && subscriber instanceof ReadsBuffersInPlace;
    downstream = subscriber;
    onSubscribeThenStart(subscriber);
  }

  @Override
  public void cancel() {
    int was = STATE.getAndSet(this, DONE);
    if (was == DONE) {
      return; // rule 3.7
    }
    downstream = null; // no signal follows a cancel: the subscriber is not kept (rule 3.13)
    if (was <= IDLE) { // (NEW: cancelled through a cast before anyone subscribed)
      discard();
    } else {
      cancelWanted = true;
      cancelStream();
    }
  }

  /** Sends the request, once: the subscriber has asked and its onSubscribe has returned. */
  @Override
  protected void start() {
    if (!STATE.compareAndSet(this, IDLE, STARTED)) {
      return; // started already, or ended before it started
    }
    Payload p = request;
    request = null;
    if (cancelWanted) {
      p.release(); // cancelled since the state said STARTED: nothing need go out
      return;
    }
    Stream s;
    try {
      s = p.requestResponseOn(connection, this);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // Not sent: the hand-off queue is full, or an encoded payload's encoder failed on this
      // thread (its length, or its bytes when the frame cannot take it in place). The connection
      // or the payload released the buffers. (A closed connection or a shut-down loop is told
      // through onError instead.)
      claimAndFail(e, STARTED);
      return;
    }
    sent(s, connection.executor());
    if (cancelWanted) {
      cancelStream(); // cancelled meanwhile, before the stream was known
    }
  }

  /** The request, never sent and now never to be: released. */
  private void discard() {
    Payload p = request;
    request = null;
    if (p != null) {
      p.release();
    }
  }

  /**
   * Ends the call with {@code error} if nothing ended it before; {@code cancel}: a call already
   * sent is cancelled too.
   */
  @Override
  protected void fail(Throwable error, boolean cancel) {
    int was;
    do {
      was = state;
      if (was == DONE) {
        return;
      }
    } while (!STATE.compareAndSet(this, was, DONE));
    if (was == IDLE) {
      discard();
    } else if (cancel) {
      cancelWanted = true;
      cancelStream();
    }
    signalError(error);
  }

  /** {@link #fail} when the state is known to be {@code from}; no cancel. */
  private void claimAndFail(Throwable error, int from) {
    if (STATE.compareAndSet(this, from, DONE)) {
      signalError(error);
    }
  }

  /** Tells the subscriber {@code error} on the event loop (here, with the loop shut down). */
  private void signalError(Throwable error) {
    Subscriber<? super Payload> d = downstream;
    EventExecutor loop = connection.executor();
    if (loop.inEventLoop()) {
      d.onError(error);
      return;
    }
    try {
      loop.execute(() -> d.onError(error));
    } catch (RejectedExecutionException loopGone) {
      d.onError(error);
    }
  }

  /**
   * Cancels the stream on the event loop, once (a no-op once it has ended, or with the loop gone).
   * The call has started (its state said so); off the loop, a stream not seen yet is looked for
   * again by a task on the loop.
   */
  private void cancelStream() {
    EventExecutor loop = connection.executor();
    Stream s = streamOrLookAgain(loop, this::cancelStream);
    if (s == null) {
      return; // a start still under way sees the wish and cancels by itself
    }
    if (!CANCEL_SENT.compareAndSet(this, false, true)) {
      return; // start() and cancel() both saw the stream and the wish: the other one sends it
    }
    if (loop.inEventLoop()) {
      s.cancel();
      return;
    }
    try {
      loop.execute(s::cancel);
    } catch (RejectedExecutionException loopGone) {
      // The connection, and the call with it, failed as the loop shut down.
    }
  }

  // ------------------------------------------------------------------ StreamListener (loop)

  @Override
  public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
    if (state != STARTED || !STATE.compareAndSet(this, STARTED, DONE)) {
      return; // ended meanwhile (the engine releases the buffers)
    }
    Subscriber<? super Payload> d = downstream;
    try {
      if (readsBuffers) {
        ((ReadsBuffersInPlace) d).onNextInPlace(metadata, data);
      } else {
        d.onNext(
            lends ? Payload.lent(metadata, data) : Payloads.received(metadata, data, zeroCopy));
      }
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // The subscriber's onNext threw (rule 2.13 forbids it): it is told its exception instead of
      // the completion, as a stream's subscriber is (the call has its one answer: nothing to stop).
      d.onError(e);
      return;
    }
    d.onComplete(); // one answer ends the call: the engine's completion that follows finds DONE
  }

  @Override
  public void onComplete(Stream s) {
    // Read first: after an answer this is the engine's completion, which finds DONE, and a failed
    // compareAndSet is a locked instruction all the same.
    if (state == STARTED && STATE.compareAndSet(this, STARTED, DONE)) {
      downstream.onComplete(); // completed without an answer: an empty one
    }
  }

  @Override
  public void onError(Stream s, int errorCode, String message) {
    claimAndFail(StreamErrorException.received(errorCode, message), STARTED);
  }
}
