package io.millrace.rxjava.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.UnaryAnswer;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.core.SingleObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import org.reactivestreams.Publisher;

/**
 * A handler's request-response {@code Single} as the Publisher the engine's layer takes the answer
 * from: observed directly, where {@code toFlowable()} and a relay cost four objects and a deferred
 * scalar subscription's atomics per call. The Single is subscribed as the handler returns it (the
 * layer subscribes right after, on the same thread, so nothing can come between), and an answer
 * that is there at once ({@code Single.just}, {@code fromCallable}, a chain of them) is handed over
 * as known: the layer sends it without a subscription.
 */
public final class SingleAnswer extends UnaryAnswer<Payload> implements SingleObserver<Payload> {
  private volatile Disposable upstream;

  private SingleAnswer() {}

  /** Null (the layer fails the call) for null; else subscribed, and settled if it answered. */
  public static Publisher<Payload> of(Single<Payload> single) {
    if (single == null) {
      return null;
    }
    SingleAnswer answer = new SingleAnswer();
    single.subscribe(answer);
    return answer.settled();
  }

  @Override
  public void onSubscribe(Disposable d) {
    upstream = d;
    if (cancelled()) {
      d.dispose(); // cancelled before the Single gave its Disposable
    }
  }

  @Override
  public void onSuccess(Payload value) {
    answer(value);
  }

  @Override
  public void onError(Throwable failure) {
    fail(failure);
  }

  @Override
  protected void onCancelled() {
    Disposable d = upstream;
    if (d != null) {
      d.dispose();
    }
  }

  @Override
  protected void discard(Payload response) {
    response.release();
  }
}
