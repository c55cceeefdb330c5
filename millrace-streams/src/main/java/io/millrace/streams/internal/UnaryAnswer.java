package io.millrace.streams.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The one answer of a unary call, given through the callbacks of the handler's own library, as the
 * Publisher the runtime subscribes to: the base of the Reactor, RxJava and Mutiny flavours'
 * request-response answers, of the observer flavour's unary response observer, and of the RPC
 * layer's ({@code io.millrace.rpc.OneAnswer}: the generated bindings' Single and Uni). One object,
 * where converting to a library's Publisher and relaying it costs several objects and atomic
 * operations per call.
 *
 * <p>A subclass subscribes to its library's answer either when the runtime subscribes ({@link
 * #onSubscribed}) or, where its caller allows, at once; then {@link #settled()} hands an answer
 * that came at once over as a {@link Scalar}, which the runtime takes by a plain call where it can
 * send it at once (else it subscribes to the Scalar). The library's signals go to {@link #answer}
 * and {@link #fail}; the runtime's cancel comes to {@link #onCancelled}; a response that will never
 * be signalled goes to {@link #discard}.
 *
 * <p>The outcome is decided once ({@code state}): the answer moves it from OPEN to RESPONSE, FAILED
 * or EMPTY (its field written before, read after), and whoever then moves it to DONE owns what it
 * holds: the one that finds a subscriber that may have it signals, a cancel or an invalid request
 * discards a response. So the subscriber hears one end, from one thread, and a response waits for
 * the subscriber's request while an end without one does not. The library's signals must not
 * overlap, as its own rules say.
 *
 * @param <T> the response type
 */
public abstract class UnaryAnswer<T> implements Publisher<T>, Subscription {
  private static final int OPEN = 0; // no answer yet
  private static final int RESPONSE = 1; // the answer is {@code value}, not yet signalled
  private static final int FAILED = 2; // the answer is {@code error}, not yet signalled
  private static final int EMPTY = 3; // ended without a response, not yet signalled
  private static final int DONE = 4; // signalled, handed over as a Scalar, or cancelled

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryAnswer> STATE =
      AtomicIntegerFieldUpdater.newUpdater(UnaryAnswer.class, "state");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryAnswer> CANCELLED =
      AtomicIntegerFieldUpdater.newUpdater(UnaryAnswer.class, "cancelled");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<UnaryAnswer> SUBSCRIBED =
      AtomicIntegerFieldUpdater.newUpdater(UnaryAnswer.class, "subscribed");

  private static final VarHandle DOWNSTREAM;

  static {
    try {
      DOWNSTREAM =
          MethodHandles.lookup().findVarHandle(UnaryAnswer.class, "downstream", Subscriber.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile int state;
  private T value; // written before state becomes RESPONSE
  private Throwable error; // written before state becomes FAILED
  private volatile int cancelled;
  private volatile int subscribed;
  private volatile boolean requested;
  private long invalidRequest; // a request(n <= 0) made before onSubscribe returned...
  private volatile boolean invalid; // ...published by this flag
  private volatile Subscriber<? super T> downstream; // set once onSubscribe has returned

  /** For subclasses. */
  protected UnaryAnswer() {}

  /**
   * Subscribes {@code answer} to its library's {@code source} now, with {@code subscribe} (a method
   * reference: nothing is made per call), and returns it {@linkplain #settled settled}: for a
   * caller that subscribes to the answer right after, on the same thread. When {@code subscribe}
   * throws, the answer is cancelled first (a response it gave is discarded, the library's work
   * cancelled), and the exception goes on.
   */
  protected static <S, T, A extends UnaryAnswer<T>> Publisher<T> subscribedAtOnce(
      S source, A answer, BiConsumer<S, ? super A> subscribe) {
    try {
      subscribe.accept(source, answer);
    } catch (Throwable e) {
      answer.cancel();
      throw e;
    }
    return answer.settled();
  }

  // ------------------------------------------------------------------ the library's side

  /**
   * The answer is {@code response} (null: the call ends without one); false when the call had an
   * answer already or was cancelled, and then {@code response} was {@linkplain #discard discarded}.
   */
  protected final boolean answer(T response) {
    if (response == null) {
      if (state == OPEN && STATE.compareAndSet(this, OPEN, EMPTY)) {
        tryEmit();
        return true;
      }
      return false;
    }
    if (state != OPEN) {
      discard(response);
      return false;
    }
    value = response;
    if (STATE.compareAndSet(this, OPEN, RESPONSE)) {
      tryEmit();
      return true;
    }
    value = null; // nobody reads it: the state never said RESPONSE
    discard(response);
    return false;
  }

  /** The call fails with {@code failure}; false when it had an answer already or was cancelled. */
  protected final boolean fail(Throwable failure) {
    if (state != OPEN) {
      return false;
    }
    error = failure;
    if (STATE.compareAndSet(this, OPEN, FAILED)) {
      tryEmit();
      return true;
    }
    return false;
  }

  /** Whether the call still waits for its answer (no answer, no cancel). */
  protected final boolean open() {
    return state == OPEN && cancelled == 0;
  }

  /** Whether the runtime cancelled the call (the caller, the deadline or the connection). */
  protected final boolean cancelled() {
    return cancelled != 0;
  }

  /**
   * This answer as the runtime should take it: a {@link Scalar} of the outcome when it is known
   * already (and then this object is done), else this Publisher.
   */
  protected final Publisher<T> settled() {
    int s = state;
    if (s != OPEN && s != DONE && STATE.compareAndSet(this, s, DONE)) {
      Publisher<T> known = Scalar.known(s == RESPONSE ? value : null, s == FAILED ? error : null);
      value = null;
      return known;
    }
    return this;
  }

  /**
   * The runtime subscribed, and its onSubscribe returned: an answer subscribed late starts here.
   */
  protected void onSubscribed() {}

  /**
   * The runtime subscribed, but the call was cancelled (or failed by an invalid request) before
   * {@link #onSubscribed} could run, which it then does not: by default nothing, so a library's
   * answer that was not subscribed yet never runs. A handler that must run all the same (to let go
   * of its request) runs here, and sees the call cancelled.
   */
  protected void onSubscribedCancelled() {}

  /**
   * A fresh answer for a second subscriber (an interceptor that retries), subscribing to the
   * library's answer again; null (the default) refuses a second subscriber.
   */
  protected UnaryAnswer<T> again() {
    return null;
  }

  /** The runtime cancelled the call: stop the library's work (once, on the cancelling thread). */
  protected abstract void onCancelled();

  /**
   * {@code response} will never be signalled (the call was cancelled, failed by an invalid request,
   * or had its answer already): release what it holds. Called once per such response, on the thread
   * that found it so; by default nothing (a message on the heap needs nothing).
   */
  protected void discard(T response) {}

  // ------------------------------------------------------------------ the runtime's side

  @Override
  public final void subscribe(Subscriber<? super T> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      UnaryAnswer<T> fresh = again();
      if (fresh != null) {
        fresh.subscribe(subscriber);
      } else {
        subscriber.onSubscribe(NoopSubscription.INSTANCE);
        subscriber.onError(new IllegalStateException("a call's responses have one subscriber"));
      }
      return;
    }
    subscriber.onSubscribe(this);
    downstream = subscriber; // after onSubscribe returned: nothing is signalled before (rule 1.3)
    if (invalid) {
      failRequest(subscriber, invalidRequest); // asked for a non-positive amount inside onSubscribe
    }
    if (cancelled != 0) {
      downstream = null; // not kept (rule 3.13)
      onSubscribedCancelled();
      return;
    }
    try {
      onSubscribed();
    } catch (RuntimeException e) { // the library's subscribe broke its rule 1.9, or a hook threw
      fail(e);
    } catch (Error e) {
      cancel(); // a response it gave is discarded; the error goes on
      throw e;
    }
    tryEmit();
  }

  @Override
  public final void request(long n) {
    if (n <= 0) {
      invalidRequest = n; // failed here, or by subscribe once onSubscribe returns: once, either way
      invalid = true;
      Subscriber<? super T> s = downstream;
      if (s != null) {
        failRequest(s, n);
      }
      return;
    }
    requested = true;
    tryEmit();
  }

  /**
   * Rule 3.9: the call fails with IllegalArgumentException, and the library's work is cancelled.
   */
  private void failRequest(Subscriber<? super T> s, long n) {
    int was = STATE.getAndSet(this, DONE);
    if (was == DONE) {
      return;
    }
    if (was == RESPONSE) {
      T v = value;
      value = null;
      discard(v);
    }
    if (CANCELLED.compareAndSet(this, 0, 1)) {
      onCancelled();
    }
    downstream = null;
    s.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
  }

  @Override
  public final void cancel() {
    if (!CANCELLED.compareAndSet(this, 0, 1)) {
      return;
    }
    downstream =
        null; // nothing is signalled after a cancel: the subscriber is not kept (rule 3.13)
    if (STATE.getAndSet(this, DONE) == RESPONSE) {
      T v = value; // not signalled, and now never to be: this thread moved the state, so it owns it
      value = null;
      discard(v);
    }
    onCancelled();
  }

  /** Signals the answer once it is known and the subscriber may have it. Any thread. */
  private void tryEmit() {
    Subscriber<? super T> s = downstream;
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
    // Not kept after its end: a library that keeps this observer (a source that ignores dispose)
    // would keep the subscriber and its stream. A release store: nothing orders on it.
    DOWNSTREAM.setRelease(this, null);
    if (answer == FAILED) {
      s.onError(error);
      return;
    }
    if (answer == RESPONSE) {
      T v = value;
      value = null;
      s.onNext(v);
    }
    s.onComplete();
  }
}
