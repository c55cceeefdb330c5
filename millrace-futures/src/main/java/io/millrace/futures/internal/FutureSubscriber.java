package io.millrace.futures.internal;

import io.millrace.streams.Payload;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A call's at most one item as a CompletableFuture: completed with the item (null if none) when the
 * Publisher completes, exceptionally when it fails; cancelling the future cancels the call. An item
 * that nobody will take (the future was completed first: a cancel or a timeout, perhaps between the
 * item and the Publisher's completion) is released.
 */
public final class FutureSubscriber<T> extends CompletableFuture<T> implements Subscriber<T> {
  /** In {@link #value} once the item was taken, by the completion or by a cancel. */
  private static final Object TAKEN = new Object();

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<FutureSubscriber, Object> VALUE =
      AtomicReferenceFieldUpdater.newUpdater(FutureSubscriber.class, Object.class, "value");

  private volatile Subscription subscription;
  private volatile boolean fromPublisher;
  private volatile Object value;

  // Completed by anyone else (cancel, orTimeout, complete): the call is no longer wanted. Every
  // public way to complete the future from outside is overridden to say so, rather than a
  // whenComplete registered per call (a lambda, a completion node and an atomic push each).

  @Override
  public boolean complete(T value) {
    boolean completed = super.complete(value);
    if (completed && !fromPublisher) {
      completedElsewhere();
    }
    return completed;
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    boolean completed = super.completeExceptionally(ex);
    if (completed && !fromPublisher) {
      completedElsewhere();
    }
    return completed;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean wasDone = isDone();
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    if (cancelled && !wasDone) { // (a repeated cancel, or one after the call ended, is a no-op)
      completedElsewhere();
    }
    return cancelled;
  }

  @Override
  public void obtrudeValue(T value) {
    super.obtrudeValue(value);
    if (!fromPublisher) {
      completedElsewhere();
    }
  }

  @Override
  public void obtrudeException(Throwable ex) {
    super.obtrudeException(ex);
    if (!fromPublisher) {
      completedElsewhere();
    }
  }

  /**
   * As CompletableFuture's, through {@link #complete}: its own completes the future internally,
   * past the overrides. (The one-argument form calls this one.)
   */
  @Override
  public CompletableFuture<T> completeAsync(
      java.util.function.Supplier<? extends T> supplier, java.util.concurrent.Executor executor) {
    if (supplier == null || executor == null) {
      throw new NullPointerException();
    }
    executor.execute(
        () -> {
          if (isDone()) {
            return;
          }
          try {
            complete(supplier.get());
          } catch (Throwable t) { // stored wrapped, as the JDK's own completeAsync stores it
            completeExceptionally(
                t instanceof java.util.concurrent.CompletionException
                    ? t
                    : new java.util.concurrent.CompletionException(t));
          }
        });
    return this;
  }

  /** Cancels the call and releases an item that came before the future was completed elsewhere. */
  private void completedElsewhere() {
    Subscription s = subscription;
    if (s != null) {
      s.cancel();
    }
    release(VALUE.getAndSet(this, TAKEN)); // an item that came before the cancel
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (subscription != null) {
      s.cancel(); // rule 2.5: one subscription, the first
      return;
    }
    subscription = s;
    if (isDone()) {
      s.cancel(); // cancelled before the call was made: it never is
    } else {
      s.request(1);
    }
  }

  @Override
  public void onNext(T item) {
    if (item == null) {
      throw new NullPointerException("item"); // rule 2.13
    }
    if (!VALUE.compareAndSet(this, null, item)) {
      release(item); // the future was completed first: nobody takes it
    }
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("error"); // rule 2.13
    }
    fromPublisher = true;
    release(VALUE.getAndSet(this, TAKEN)); // an item before the failure is not the answer
    completeExceptionally(t);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void onComplete() {
    fromPublisher = true;
    Object v = VALUE.getAndSet(this, TAKEN);
    if (v == TAKEN) {
      return; // completed by a cancel or a timeout, which released the item
    }
    if (!complete((T) v)) {
      release(v); // the future was completed first (a timeout): nobody takes it
    }
  }

  private static void release(Object v) {
    if (v instanceof Payload p) {
      p.release();
    }
  }
}
