package io.millrace.futures.internal;

import io.millrace.streams.Payload;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A call's at most one item as a CompletableFuture: completed with the item (null if none) when the
 * Publisher completes, exceptionally when it fails; cancelling the future cancels the call.
 */
public final class FutureSubscriber<T> extends CompletableFuture<T> implements Subscriber<T> {
  private volatile Subscription subscription;
  private volatile boolean fromPublisher;
  private T value;

  public FutureSubscriber() {
    // Completed by anyone else (cancel, orTimeout, complete): the call is no longer wanted.
    whenComplete(
        (v, e) -> {
          if (!fromPublisher) {
            Subscription s = subscription;
            if (s != null) {
              s.cancel();
            }
          }
        });
  }

  @Override
  public void onSubscribe(Subscription s) {
    subscription = s;
    if (isDone()) {
      s.cancel(); // cancelled before the call was made: it never is
    } else {
      s.request(1);
    }
  }

  @Override
  public void onNext(T item) {
    value = item;
  }

  @Override
  public void onError(Throwable t) {
    fromPublisher = true;
    completeExceptionally(t);
  }

  @Override
  public void onComplete() {
    T v = value;
    value = null;
    fromPublisher = true;
    if (!complete(v) && v instanceof Payload) {
      ((Payload) v).release(); // the future was completed first (a timeout): nobody takes it
    }
  }
}
