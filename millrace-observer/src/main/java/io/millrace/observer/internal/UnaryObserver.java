package io.millrace.observer.internal;

import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.streams.internal.Scalar;
import io.millrace.streams.internal.UnaryAnswer;
import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;

/**
 * A unary call's response observer in the StreamObserver flavour, and the handler's answer: one
 * object where the general {@link ObserverCall} keeps a sending queue, credit, waiters and inbound
 * flow control that one response never needs. The observer flavour's request-response and the RPC
 * layer's unary methods answer through it; {@link ObserverCall.Rules} says how a value it lets go
 * is released and what a cancelled call throws.
 *
 * <p>When the handler runs. Where the caller says it may ({@code atOnce}: on the event loop, with
 * nothing that could cancel the call before the loop is free again), at once: an answer given
 * before the handler returns (the common case: {@code onNext} then {@code onCompleted}), with no
 * on-cancel or on-ready handler set, is handed over as a {@link Scalar}, which the runtime takes by
 * a plain call. Anywhere else (a handler executor, an RPC deadline), when the runtime subscribes,
 * as {@code ObserverCall} runs it: the caller's cancel then reaches a handler that is still running
 * ({@code isCancelled}, the on-cancel handler, {@code onNext} throwing). A handler whose call was
 * cancelled between the layer's last look and its subscription (or failed by an invalid request, or
 * an RPC deadline, first) still runs, sees the call cancelled, and has what it sends released; an
 * on-cancel handler it sets then does not run, as with {@code ObserverCall}.
 *
 * <p>What the handler sees is what {@code ObserverCall} gives a unary responder: the first {@code
 * onNext} is the response and ends the call (a second one is released, as the runtime would drop
 * it); {@code onNext} after {@code onCompleted} or {@code onError} throws IllegalStateException;
 * after a cancel {@code onNext} throws the rules' cancelled error unless an on-cancel handler was
 * set, which then runs once on the event loop. {@code onCompleted} without a response is an empty
 * answer (which the RPC runtime fails with INTERNAL). A RuntimeException the handler throws fails
 * the call, unless it answered first; an Error releases any response and goes on. One response
 * needs no demand, so {@code isReady()} is true until the call ends or is cancelled. There are no
 * requests to read, so {@code request(n)} and {@code disableAutoInboundFlowControl} do nothing.
 *
 * <p>The outcome and its signalling are {@link UnaryAnswer}'s. The handler's calls must not
 * overlap, as for any StreamObserver.
 */
public final class UnaryObserver<V> extends UnaryAnswer<V> implements ServerCallStreamObserver<V> {
  private static final System.Logger LOG = System.getLogger(UnaryObserver.class.getName());

  private final EventExecutor loop;
  private final ObserverCall.Rules rules;
  // The handler when it runs on subscribe; null when it ran at once.
  private final Consumer<ServerCallStreamObserver<V>> handler;
  private volatile boolean ended; // onCompleted or onError was called
  private volatile Runnable onCancel;
  private volatile Runnable onReady;

  /** Whether the on-cancel handler has run (or been claimed to run): once per call. */
  @SuppressWarnings("unused") // through ON_CANCEL_RAN
  private volatile int onCancelRan;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryObserver> ON_CANCEL_RAN =
      AtomicIntegerFieldUpdater.newUpdater(UnaryObserver.class, "onCancelRan");

  private UnaryObserver(
      EventExecutor loop,
      ObserverCall.Rules rules,
      Consumer<ServerCallStreamObserver<V>> handlerOnSubscribe) {
    this.loop = loop;
    this.rules = rules;
    this.handler = handlerOnSubscribe;
  }

  /**
   * The answer of a unary call on {@code loop} whose handler is {@code handler}: run now when
   * {@code atOnce} (a {@link Scalar} when it answered before returning and set no handlers), else
   * when the runtime subscribes. {@code atOnce} only where nothing can cancel the call before the
   * runtime subscribes: on the call's event loop, with the runtime subscribing right after, and
   * nothing (a deadline, an interceptor) that should see the handler run later.
   */
  public static <V> Publisher<V> answer(
      boolean atOnce,
      EventExecutor loop,
      ObserverCall.Rules rules,
      Consumer<ServerCallStreamObserver<V>> handler) {
    if (!atOnce) {
      return new UnaryObserver<>(loop, rules, handler);
    }
    UnaryObserver<V> r = new UnaryObserver<>(loop, rules, null);
    r.run(handler);
    if (r.onCancel == null && r.onReady == null) {
      Publisher<V> answer = r.settled();
      if (answer != r) {
        return answer;
      }
    }
    r.started();
    return r;
  }

  /** Runs the handler with this observer; what it throws fails the call unless it answered. */
  private void run(Consumer<ServerCallStreamObserver<V>> handler) {
    try {
      handler.accept(this);
    } catch (RuntimeException e) {
      onError(e); // ignored if it answered first
    } catch (Error e) {
      cancel(); // a response it gave is released; the error goes on, and the call fails with it
      throw e;
    }
  }

  /** The handler returned without an answer: an on-ready handler runs once, on the loop. */
  private void started() {
    Runnable ready = onReady;
    if (ready != null && isReady()) {
      ObserverCall.runOnLoop(
          loop,
          () -> {
            if (isReady()) {
              try {
                ready.run();
              } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "on-ready handler threw", e);
                onError(e);
              }
            }
          });
    }
  }

  @Override
  protected void onSubscribed() {
    if (handler != null) {
      run(handler); // with the subscriber in place: a cancel now reaches the running handler
      started();
    }
  }

  /**
   * Cancelled before the handler could run on subscribe (the peer's cancel just before the layer
   * subscribed, an invalid request, an RPC deadline): it runs all the same, as {@code ObserverCall}
   * runs it, and sees the call cancelled, so that it lets go of its request.
   */
  @Override
  protected void onSubscribedCancelled() {
    if (handler != null) {
      run(handler);
    }
  }

  @Override
  protected void discard(V response) {
    rules.release(response);
  }

  @Override
  protected void onCancelled() {
    runOnCancel();
  }

  /** Runs the on-cancel handler on the loop if one is set, once per call. */
  private void runOnCancel() {
    Runnable cancelHandler = onCancel;
    if (cancelHandler != null && ON_CANCEL_RAN.compareAndSet(this, 0, 1)) {
      ObserverCall.runHandler(loop, cancelHandler, "on-cancel handler");
    }
  }

  // ------------------------------------------------------------------ the handler's side

  @Override
  public void onNext(V response) {
    if (response == null) {
      throw new NullPointerException("value");
    }
    if (ended) {
      rules.release(response);
      throw new IllegalStateException("onNext after onCompleted or onError");
    }
    if (cancelled()) {
      rules.release(response);
      if (onCancel == null) {
        throw rules.cancelled("the call was cancelled");
      }
      return; // the on-cancel handler tells the application
    }
    answer(response); // a second response is discarded: a unary call ended with its first
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable");
    }
    if (ended) {
      return;
    }
    ended = true;
    fail(t); // ignored after the answer (the response stands) or a cancel
  }

  @Override
  public void onCompleted() {
    if (ended) {
      return;
    }
    ended = true;
    answer(null); // an empty answer (the RPC runtime fails a call without a response)
  }

  @Override
  public boolean isReady() {
    return open() && !ended;
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
    this.onReady = onReadyHandler;
  }

  @Override
  public void disableAutoInboundFlowControl() {}

  @Override
  public void request(int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("count must be positive: " + count);
    }
  }

  @Override
  public boolean isCancelled() {
    return cancelled();
  }

  /** As {@code ObserverCall}'s: a call cancelled before this runs the handler now, once. */
  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
    if (cancelled()) { // read after the handler is published: cancel() writes then reads
      runOnCancel();
    }
  }
}
