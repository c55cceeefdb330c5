package io.millrace.rxjava.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.PayloadAnswer;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.core.SingleObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import org.reactivestreams.Publisher;

/**
 * A handler's request-response {@code Single} as the Publisher the engine's layer takes the answer
 * from: observed directly, where {@code toFlowable()} and a relay cost 72 bytes more per call (both
 * sides of the in-process pipe benchmark) and a deferred scalar subscription's atomics. The Single
 * is subscribed as the handler returns it, on the handler's thread (the layer subscribes to this
 * right after, on the same thread), as {@code toFlowable()} subscribed it before. An answer that is
 * there at once ({@code Single.just}, {@code fromCallable}, a chain of them) is handed over as
 * known, and the layer sends it by a plain call when the stream can take it at once.
 */
public final class SingleAnswer extends PayloadAnswer<Disposable>
    implements SingleObserver<Payload> {

  private SingleAnswer() {}

  /** Null (the layer fails the call) for null; else subscribed, and settled if it answered. */
  public static Publisher<Payload> of(Single<Payload> single) {
    if (single == null) {
      return null;
    }
    return subscribedAtOnce(single, new SingleAnswer(), Single::subscribe);
  }

  @Override
  public void onSubscribe(Disposable d) {
    keep(d);
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
  protected void stop(Disposable d) {
    d.dispose();
  }
}
