package io.millrace.rpc;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A blocking unary handler's one response, computed on an executor: the publisher, its subscription
 * and the task the executor runs, in one object per call.
 *
 * <p>The answer goes out from whichever side comes second: the handler's thread when the call had
 * already asked for it (the runtime asks at once), else the thread that asks. Neither waits for the
 * other, so the handler never parks for demand. A call cancelled before the executor gets to it
 * does not run the handler. A non-positive request ends the call with an error (rule 3.9) once the
 * handler is done or skipped.
 */
final class ExecutorUnary<T> implements Publisher<T>, Subscription, Runnable {
  private static final int REQUESTED = 1;
  private static final int READY = 2; // the handler is done (or skipped): outcome is set
  private static final int CANCELLED = 4;
  private static final int ANSWERED = 8;
  private static final int INVALID = 16; // a non-positive request: the answer is its error

  private static final AtomicIntegerFieldUpdater<ExecutorUnary<?>> STATE = newStateUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicIntegerFieldUpdater<ExecutorUnary<?>> newStateUpdater() {
    return (AtomicIntegerFieldUpdater)
        AtomicIntegerFieldUpdater.newUpdater(ExecutorUnary.class, "state");
  }

  private final Executor executor;
  private final Supplier<T> handler;
  private Subscriber<? super T> downstream;
  private volatile int state;
  private long invalid; // a non-positive request: written before INVALID is set, read after
  private T response; // written before READY is set, read after it is seen
  private Throwable failure;

  ExecutorUnary(Executor executor, Supplier<T> handler) {
    this.executor = executor;
    this.handler = handler;
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    Objects.requireNonNull(subscriber, "subscriber"); // rule 1.9
    if (downstream != null) {
      Publishers.refuseSecond(subscriber, "response has");
      return;
    }
    downstream = subscriber;
    subscriber.onSubscribe(this);
    try {
      executor.execute(this);
    } catch (RejectedExecutionException e) { // shut down or saturated: worth a retry elsewhere
      failure =
          Status.UNAVAILABLE
              .withMessage("the server cannot run the handler now")
              .withCause(e)
              .asException();
      ready();
    }
  }

  /** The executor's task: the handler, unless the call was cancelled while it waited. */
  @Override
  public void run() {
    if ((state & CANCELLED) == 0) {
      try {
        response = handler.get();
      } catch (Throwable t) { // also what a handler throws sneakily: the call always ends
        failure = t;
      }
    }
    ready();
    if (failure instanceof Error e) {
      throw e;
    }
  }

  private void ready() {
    answerIfDue(STATE.getAndUpdate(this, v -> v | READY) | READY);
  }

  @Override
  public void request(long n) {
    if (n <= 0) { // the handler need not run; the call ends with the error now (rule 3.9)
      invalid = n; // seen by whoever sees INVALID
      int was =
          STATE.getAndUpdate(
              this, v -> (v & CANCELLED) != 0 ? v : v | INVALID | CANCELLED | REQUESTED);
      if ((was & CANCELLED) == 0 && claim()) { // nothing after a cancel (rule 3.6)
        answer();
      }
      return;
    }
    if ((state & REQUESTED) == 0) {
      answerIfDue(STATE.getAndUpdate(this, v -> v | REQUESTED) | REQUESTED);
    }
  }

  @Override
  public void cancel() {
    STATE.getAndUpdate(this, v -> v | CANCELLED);
  }

  /**
   * Answers once the handler is done, and for a response once it is asked for: an error or an empty
   * end needs no demand (rule 1.4).
   */
  private void answerIfDue(int s) {
    if ((s & READY) == 0
        || (s & ANSWERED) != 0
        || ((s & REQUESTED) == 0 && response != null && failure == null)) {
      return;
    }
    if (claim()) {
      answer();
    }
  }

  /** Whether this thread is the one that answers. */
  private boolean claim() {
    int s;
    do {
      s = state;
      if ((s & ANSWERED) != 0) {
        return false;
      }
    } while (!STATE.compareAndSet(this, s, s | ANSWERED));
    return true;
  }

  /** Once, from the side that claimed it. */
  private void answer() {
    Subscriber<? super T> d = downstream;
    int s = state;
    if ((s & INVALID) != 0) {
      d.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + invalid));
    } else if ((s & CANCELLED) != 0) {
      return; // nothing after a cancel
    } else if (failure != null) {
      d.onError(failure);
    } else {
      if (response != null) { // a null answer completes empty: the runtime's INTERNAL
        d.onNext(response);
      }
      d.onComplete();
    }
  }
}
