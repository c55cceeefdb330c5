package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.netty.util.concurrent.EventExecutor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The start of a call that its one subscriber's first request sends: the handshake between {@code
 * subscribe}, which must not start the call before the subscriber's {@code onSubscribe} has
 * returned (Reactive Streams rule 1.3), and {@code request}, which may come from any thread, inside
 * {@code onSubscribe} or after it. The streams layer's request-response ({@link AnswerPublisher})
 * and the RPC's unary call share it; each keeps its own state for the rest (started, ended).
 *
 * <p>Why this shape. Subscribers ask inside {@code onSubscribe}, on the subscribing thread:
 * Reactor's, RxJava's and Mutiny's all do. That request is noted in a plain field while {@code
 * subscribe} records its thread, and {@code subscribe} starts the call when {@code onSubscribe}
 * returns, so a call writes no volatile field to start. Measured on the Reactor requester: the two
 * volatile writes of the general handshake (and the stream's, which its subclasses also avoid on
 * the event loop) cost 15-20 ns of a call's 170 (docs/benchmarks.md, thirty-ninth session).
 * Requests from other threads, or made later, take the volatile handshake: each side writes its
 * flag, then reads the other's, so that at least one of the two sees the other and starts the call.
 */
public abstract class OneCall implements Subscription {
  /**
   * The thread inside the subscriber's onSubscribe, or null. Plain: written by the subscribing
   * thread alone, and no other thread ever finds its own Thread here.
   */
  private Thread subscribing;

  /** A request came inside onSubscribe, on the subscribing thread. */
  private boolean requestedInside;

  /**
   * Written only when no request came inside onSubscribe (then it stays false, and a request from
   * elsewhere finds the call started, or failed, by the subclass's state).
   */
  private volatile boolean onSubscribeReturned;

  private volatile boolean requested;
  private volatile Throwable invalidRequest;

  /**
   * The call once the connection has it ({@link #sent}). A start on the event loop writes it
   * without a fence ({@link #STREAM}): a cancel from another thread that does not see it yet looks
   * again on the loop, after the start ({@link #streamOrLookAgain}).
   */
  private volatile Stream stream;

  private static final VarHandle STREAM;

  /** Made, not subscribed yet. */
  protected static final int NEW = 0;

  /** Subscribed, the request not sent yet. */
  protected static final int IDLE = 1;

  /** The request sent. */
  protected static final int STARTED = 2;

  /** Ended: answered, failed or cancelled. */
  protected static final int DONE = 3;

  /** The subclass's updates of {@link #state}. */
  protected static final AtomicIntegerFieldUpdater<OneCall> STATE =
      AtomicIntegerFieldUpdater.newUpdater(OneCall.class, "state");

  /**
   * The call's state, updated by the subclass: NEW (0) when made, with no initializer, which would
   * be a volatile store in the constructor, a full fence on x86 on every call. Subscribing claims
   * it, {@link #start} moves it from IDLE to STARTED, and whichever end comes first claims DONE.
   */
  protected volatile int state;

  static {
    try {
      STREAM = MethodHandles.lookup().findVarHandle(OneCall.class, "stream", Stream.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Hands this subscription to {@code subscriber}, then starts the call if it asked meanwhile, or
   * fails it if it asked for a non-positive amount. A subscriber whose onSubscribe throws (rule
   * 2.13 forbids it) gets the call cancelled before anything is sent; the exception goes on.
   */
  protected final void onSubscribeThenStart(Subscriber<?> subscriber) {
    subscribing = Thread.currentThread();
    try {
      subscriber.onSubscribe(this);
    } catch (Throwable e) { // a checked exception thrown sneakily too
      cancel();
      throw e;
    } finally {
      subscribing = null;
    }
    Throwable invalid = invalidRequest;
    if (invalid != null) {
      fail(invalid, true); // asked for a non-positive amount inside onSubscribe: told only now
    } else if (requestedInside) {
      start();
      // A non-positive request from another thread that found the call neither started nor its
      // onSubscribe returned (this path never says so) is seen here: the start's atomic update of
      // the subclass's state, and that request's volatile write and read, leave one of the two
      // seeing the other.
      invalid = invalidRequest;
      if (invalid != null) {
        fail(invalid, true);
      }
    } else {
      onSubscribeReturned = true;
      invalid = invalidRequest;
      if (invalid != null) {
        fail(invalid, true);
      } else if (requested) {
        start();
      }
    }
  }

  @Override
  public final void request(long n) {
    if (n <= 0) {
      IllegalArgumentException e =
          new IllegalArgumentException("request-n must be positive (rule 3.9): " + n);
      // Written before the handshake's flag, or the state, is read: onSubscribeThenStart, or the
      // start, sees one of the two. No signal while onSubscribe runs (rule 1.3).
      invalidRequest = e;
      if (onSubscribeReturned || startedOrEnded()) {
        fail(e, true); // (a started call's onSubscribe has returned)
      }
      return;
    }
    if (subscribing == Thread.currentThread()) {
      requestedInside = true; // inside onSubscribe: the call starts once it returns
      return;
    }
    if (!requested) {
      requested = true;
      if (onSubscribeReturned) {
        start();
      }
    }
  }

  /**
   * The start sent the call on {@code s}, whose event loop is {@code loop}: recorded for a cancel,
   * without a fence when this is the loop. A start off the loop writes it volatile, then looks for
   * the cancel's wish itself.
   */
  protected final void sent(Stream s, EventExecutor loop) {
    if (loop.inEventLoop()) {
      STREAM.set(this, s); // no fence: a cancel from elsewhere finds it through the loop
    } else {
      stream = s;
    }
  }

  /**
   * The stream of a call that has started, or null while its start is under way. Off the loop, a
   * null may also be a start on the loop whose plain write is not seen yet: then {@code lookAgain}
   * runs on the loop, after that start (nothing runs when the loop has shut down, and the call has
   * failed with its connection).
   */
  protected final Stream streamOrLookAgain(EventExecutor loop, Runnable lookAgain) {
    Stream s = stream;
    if (s == null && !loop.inEventLoop()) {
      try {
        loop.execute(lookAgain);
      } catch (RejectedExecutionException loopGone) {
        // The connection, and the call with it, failed as the loop shut down.
      }
    }
    return s;
  }

  /**
   * Sends the call, once: a no-op when it started already or ended before it started. An atomic
   * update of the subclass's volatile state decides, and leaves it past "subscribed" before this
   * returns (the re-read of an invalid request after the start relies on it).
   */
  protected abstract void start();

  /**
   * Whether the call has started, or ended after it was subscribed: a read of the same volatile
   * state that {@link #start} updates.
   */
  private boolean startedOrEnded() {
    return state > IDLE;
  }

  /**
   * Ends the call with {@code error} if nothing ended it before, from any thread and from any state
   * after subscribing; {@code cancel}: a call already sent is cancelled too. A call that is ended
   * (cancelled) signals nothing more. {@link #cancel} must likewise be safe before the start,
   * inside onSubscribe.
   */
  protected abstract void fail(Throwable error, boolean cancel);
}
