package io.millrace.futures.internal;

import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A call's at most one item as a CompletableFuture: completed with the item (null if none) when the
 * Publisher completes, exceptionally when it fails; cancelling the future cancels the call.
 */
public final class FutureSubscriber<T> extends CompletableFuture<T> implements Subscriber<T> {
  private volatile Subscription subscription;
  private T value;

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
    completeExceptionally(t);
  }

  @Override
  public void onComplete() {
    T v = value;
    value = null;
    complete(v);
  }

  /** Cancels the call: CANCEL reaches the peer if the request was sent. */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    Subscription s = subscription;
    if (cancelled && s != null) {
      s.cancel();
    }
    return cancelled;
  }
}
