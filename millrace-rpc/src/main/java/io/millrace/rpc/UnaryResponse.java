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
 * <p>The handler runs when the runtime asks for the answer ({@link #answer}), as a Reactor or
 * RxJava handler method does. One that answered before returning (the common case: {@code onNext}
 * then {@code onCompleted}) and set no on-cancel or on-ready handler has its answer given as a
 * {@link Scalar}, which the runtime takes by a plain call ({@code AnsweredCall}); any other answers
 * through this Publisher, from whichever thread gives it.
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
 * ANSWERED (through SETTING while the answer is written), and whoever then finds a subscriber that
 * asked (or an end that needs no asking) moves it to DONE and signals; a cancel moves it to DONE
 * too. So the subscriber hears one end, from one thread.
 */
final class UnaryResponse<Resp>
    implements ServerCallStreamObserver<Resp>, Publisher<Resp>, Subscription {
  private static final System.Logger LOG = System.getLogger(UnaryResponse.class.getName());

  private static final int OPEN = 0; // no answer yet
  private static final int SETTING = 1; // the handler is writing its answer
  private static final int ANSWERED = 2; // the answer is known, not yet signalled
  private static final int DONE = 3; // signalled, handed over as a Scalar, or cancelled

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryResponse> STATE =
      AtomicIntegerFieldUpdater.newUpdater(UnaryResponse.class, "state");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryResponse> CANCELLED =
      AtomicIntegerFieldUpdater.newUpdater(UnaryResponse.class, "cancelled");

  private final ServerContext context;
  private volatile int state;
  private Resp value; // the response (null for none): written in SETTING, read once ANSWERED
  private Throwable error; // or the failure, likewise
  private volatile boolean ended; // onCompleted or onError was called
  private volatile int cancelled;
  private volatile boolean requested;
  private volatile Subscriber<? super Resp> downstream;
  private volatile Runnable onCancel;
  private volatile Runnable onReady;

  private UnaryResponse(ServerContext context) {
    this.context = context;
  }

  /**
   * Runs {@code handler} with a new response observer and returns its answer: a {@link Scalar} when
   * it answered before returning and set no handlers, else the observer's own Publisher.
   */
  static <Resp> Publisher<Resp> answer(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handler) {
    UnaryResponse<Resp> r = new UnaryResponse<>(context);
    try {
      handler.accept(r);
    } catch (RuntimeException e) {
      r.onError(e); // ignored if it answered first
    }
    if (r.state == ANSWERED
        && r.onCancel == null
        && r.onReady == null
        && STATE.compareAndSet(r, ANSWERED, DONE)) {
      return Scalar.known(r.value, r.error);
    }
    r.started();
    return r;
  }

  /** The handler returned without an answer: an on-ready handler runs once, on the loop. */
  private void started() {
    Runnable handler = onReady;
    if (handler != null && isReady()) {
      runOnLoop(
          () -> {
            if (isReady()) {
              try {
                handler.run();
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
    if (state == OPEN && STATE.compareAndSet(this, OPEN, SETTING)) {
      value = response;
      state = ANSWERED;
      tryEmit();
    }
    // Otherwise a second response (a unary call ended with its first), or cancelled meanwhile.
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
    if (state == OPEN && STATE.compareAndSet(this, OPEN, SETTING)) {
      error = t;
      state = ANSWERED;
      tryEmit();
    }
    // Otherwise answered already (the response stands), or cancelled.
  }

  @Override
  public void onCompleted() {
    if (ended) {
      return;
    }
    ended = true;
    if (state == OPEN && STATE.compareAndSet(this, OPEN, ANSWERED)) {
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
    if (downstream != null) {
      Publishers.refuseSecond(subscriber, "responses have");
      return;
    }
    subscriber.onSubscribe(this);
    downstream = subscriber; // after onSubscribe returned: nothing is signalled before (rule 1.3)
    tryEmit();
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      Subscriber<? super Resp> s = downstream;
      if (s != null && claimDone()) {
        s.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
      }
      return;
    }
    requested = true;
    tryEmit();
  }

  @Override
  public void cancel() {
    if (!CANCELLED.compareAndSet(this, 0, 1)) {
      return;
    }
    claimDone();
    Runnable handler = onCancel;
    if (handler != null) {
      runOnLoop(
          () -> {
            try {
              handler.run();
            } catch (RuntimeException e) {
              LOG.log(Level.WARNING, "on-cancel handler threw", e);
            }
          });
    }
  }

  /** Ends the call here unless it has ended (then false); the answer, if any, is dropped. */
  private boolean claimDone() {
    int s;
    while ((s = state) != DONE) {
      if (s == SETTING) {
        Thread.onSpinWait(); // the handler is writing its answer: an instant
      } else if (STATE.compareAndSet(this, s, DONE)) {
        value = null;
        return true;
      }
    }
    return false;
  }

  /** Signals the answer once it is known and the subscriber may have it. Any thread. */
  private void tryEmit() {
    Subscriber<? super Resp> s = downstream;
    if (s == null || state != ANSWERED) {
      return;
    }
    Resp v = value;
    Throwable e = error;
    if (v != null && e == null && !requested) {
      return; // a response waits for the request; an end needs none
    }
    if (!STATE.compareAndSet(this, ANSWERED, DONE)) {
      return;
    }
    value = null;
    if (e != null) {
      s.onError(e);
      return;
    }
    if (v != null) {
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
