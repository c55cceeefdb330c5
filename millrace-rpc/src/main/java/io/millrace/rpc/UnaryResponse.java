package io.millrace.rpc;

import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.streams.internal.Scalar;
import java.lang.System.Logger.Level;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A unary method's response observer in the StreamObserver flavour, and the handler's answer: one
 * object where the general {@code ObserverCall} keeps a sending queue, credit, waiters and inbound
 * flow control that one response never needs.
 *
 * <p>When the handler runs. On the event loop of a call without a deadline, at once, when the
 * runtime asks for the answer ({@link #answer}): nothing can cancel the call before the loop is
 * free again, and an answer given before the handler returns (the common case: {@code onNext} then
 * {@code onCompleted}), with no on-cancel or on-ready handler set, is handed over as a {@link
 * Scalar}, which the runtime takes by a plain call ({@code AnsweredCall}). Anywhere else (a handler
 * executor, a deadline), when the runtime subscribes, as {@code ObserverCall} runs it: the
 * deadline's timer and the caller's cancel then reach a handler that is still running ({@code
 * isCancelled}, the on-cancel handler, {@code onNext} throwing CANCELLED).
 *
 * <p>What the handler sees is what {@code ObserverCall} gives a unary responder: the first {@code
 * onNext} is the response and ends the call (a second one is dropped, as the runtime drops it);
 * {@code onNext} after {@code onCompleted} or {@code onError} throws IllegalStateException; after a
 * cancel (by the caller, the deadline or the connection) {@code onNext} throws CANCELLED unless an
 * on-cancel handler was set, which then runs once on the event loop. What the handler throws fails
 * the call, unless it answered first. There are no requests to read, so {@code request(n)} and
 * {@code disableAutoInboundFlowControl} do nothing.
 *
 * <p>The outcome is decided once ({@code state}): the handler's answer moves it from OPEN to
 * RESPONSE, FAILED or EMPTY (its field written before, read after), and whoever then finds a
 * subscriber that may have it moves it to DONE and signals; a cancel moves it to DONE too. So the
 * subscriber hears one end, from one thread. The handler's calls must not overlap, as for any
 * StreamObserver.
 */
final class UnaryResponse<Resp>
    implements ServerCallStreamObserver<Resp>, Publisher<Resp>, Subscription {
  private static final System.Logger LOG = System.getLogger(UnaryResponse.class.getName());

  private static final int OPEN = 0; // no answer yet
  private static final int RESPONSE = 1; // the answer is {@code value}, not yet signalled
  private static final int FAILED = 2; // the answer is {@code error}, not yet signalled
  private static final int EMPTY = 3; // completed without a response, not yet signalled
  private static final int DONE = 4; // signalled, handed over as a Scalar, or cancelled

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryResponse> STATE =
      AtomicIntegerFieldUpdater.newUpdater(UnaryResponse.class, "state");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryResponse> CANCELLED =
      AtomicIntegerFieldUpdater.newUpdater(UnaryResponse.class, "cancelled");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryResponse> SUBSCRIBED =
      AtomicIntegerFieldUpdater.newUpdater(UnaryResponse.class, "subscribed");

  private final ServerContext context;
  private final Consumer<ServerCallStreamObserver<Resp>> handler; // run on subscribe; null: ran
  private volatile int state;
  private Resp value; // written before state becomes RESPONSE
  private Throwable error; // written before state becomes FAILED
  private volatile boolean ended; // onCompleted or onError was called
  private volatile int cancelled;
  private volatile int subscribed;
  private volatile boolean requested;
  private long invalidRequest; // a request(n <= 0) made before onSubscribe returned...
  private volatile boolean invalid; // ...published by this flag
  private volatile Subscriber<? super Resp> downstream; // set once onSubscribe has returned
  private volatile Runnable onCancel;
  private volatile Runnable onReady;

  private UnaryResponse(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handlerOnSubscribe) {
    this.context = context;
    this.handler = handlerOnSubscribe;
  }

  /**
   * The answer of a unary method whose handler is {@code handler}: run now, on the event loop of a
   * call without a deadline (a {@link Scalar} when it answered before returning and set no
   * handlers), else when the runtime subscribes.
   */
  static <Resp> Publisher<Resp> answer(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handler) {
    if (context.hasDeadline() || !context.loop().inEventLoop()) {
      return new UnaryResponse<>(context, handler);
    }
    UnaryResponse<Resp> r = new UnaryResponse<>(context, null);
    r.run(handler);
    int s = r.state;
    if (s != OPEN
        && s != DONE
        && r.onCancel == null
        && r.onReady == null
        && STATE.compareAndSet(r, s, DONE)) {
      return Scalar.known(s == RESPONSE ? r.value : null, s == FAILED ? r.error : null);
    }
    r.started();
    return r;
  }

  /** Runs the handler with this observer; what it throws fails the call unless it answered. */
  private void run(Consumer<ServerCallStreamObserver<Resp>> handler) {
    try {
      handler.accept(this);
    } catch (RuntimeException e) {
      onError(e); // ignored if it answered first
    }
  }

  /** The handler returned without an answer: an on-ready handler runs once, on the loop. */
  private void started() {
    Runnable ready = onReady;
    if (ready != null && isReady()) {
      runOnLoop(
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

  // ------------------------------------------------------------------ the handler's side

  @Override
  public void onNext(Resp response) {
    if (response == null) {
      throw new NullPointerException("value");
    }
    if (ended) {
      throw new IllegalStateException("onNext after onCompleted or onError");
    }
    if (cancelled != 0) {
      if (onCancel == null) {
        throw Status.CANCELLED.withMessage("the call was cancelled").asException();
      }
      return; // the on-cancel handler tells the application
    }
    if (state != OPEN) {
      return; // a second response: a unary call ended with its first
    }
    value = response;
    if (STATE.compareAndSet(this, OPEN, RESPONSE)) {
      tryEmit();
    }
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
    if (state != OPEN) {
      return; // answered already (the response stands), or cancelled
    }
    error = t;
    if (STATE.compareAndSet(this, OPEN, FAILED)) {
      tryEmit();
    }
  }

  @Override
  public void onCompleted() {
    if (ended) {
      return;
    }
    ended = true;
    if (state == OPEN && STATE.compareAndSet(this, OPEN, EMPTY)) {
      tryEmit(); // no response: the runtime fails the call with INTERNAL
    }
  }

  @Override
  public boolean isReady() {
    return state == OPEN && cancelled == 0 && !ended;
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
    return cancelled != 0;
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
  }

  // ------------------------------------------------------------------ the runtime's side

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      Publishers.refuseSecond(subscriber, "responses have");
      return;
    }
    subscriber.onSubscribe(this);
    downstream = subscriber; // after onSubscribe returned: nothing is signalled before (rule 1.3)
    if (invalid) {
      failRequest(subscriber, invalidRequest);
      return;
    }
    if (handler != null && cancelled == 0) {
      run(handler); // with the subscriber in place: a cancel now reaches the running handler
      started();
    }
    tryEmit();
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      Subscriber<? super Resp> s = downstream;
      if (s == null) {
        invalidRequest = n; // inside onSubscribe: failed once it returns
        invalid = true;
      } else {
        failRequest(s, n);
      }
      return;
    }
    requested = true;
    tryEmit();
  }

  private void failRequest(Subscriber<? super Resp> s, long n) {
    if (STATE.getAndSet(this, DONE) != DONE) {
      value = null;
      s.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
    }
  }

  @Override
  public void cancel() {
    if (!CANCELLED.compareAndSet(this, 0, 1)) {
      return;
    }
    STATE.set(this, DONE);
    value = null;
    Runnable cancelHandler = onCancel;
    if (cancelHandler != null) {
      runOnLoop(
          () -> {
            try {
              cancelHandler.run();
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "on-cancel handler threw", e);
            }
          });
    }
  }

  /** Signals the answer once it is known and the subscriber may have it. Any thread. */
  private void tryEmit() {
    Subscriber<? super Resp> s = downstream;
    if (s == null) {
      return;
    }
    int answer = state;
    if (answer == OPEN || answer == DONE || (answer == RESPONSE && !requested)) {
      return; // nothing yet, over, or a response waiting to be asked for (an end needs no asking)
    }
    if (!STATE.compareAndSet(this, answer, DONE)) {
      return;
    }
    if (answer == FAILED) {
      s.onError(error);
      return;
    }
    if (answer == RESPONSE) {
      Resp v = value;
      value = null;
      s.onNext(v);
    }
    s.onComplete();
  }

  private void runOnLoop(Runnable task) {
    if (context.loop().inEventLoop()) {
      task.run();
    } else {
      try {
        context.loop().execute(task);
      } catch (RejectedExecutionException e) {
        task.run(); // the loop is gone: nothing else runs on it
      }
    }
  }
}
