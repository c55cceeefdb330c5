package io.millrace.rxjava.internal;

import io.millrace.core.Connection;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.FireAndForgetPublisher;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.CompletableObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A fire-and-forget or metadata push as one Completable that is also its observer's Disposable: one
 * object per call where {@code Completable.fromPublisher} over the Reactive Streams Publisher took
 * three (Publisher, Completable, and the subscriber between them). It sends when subscribed and
 * completes once the payload is handed to the connection. One call, so one observer: a second gets
 * an error; {@code RxJavaRequester}'s Supplier forms make a new one per subscription.
 */
public final class SendCompletable extends Completable implements Disposable {
  private final Connection connection;
  private final boolean metadataPush;
  private Payload payload;
  private volatile int used;
  private volatile boolean disposed;

  private static final AtomicIntegerFieldUpdater<SendCompletable> USED =
      AtomicIntegerFieldUpdater.newUpdater(SendCompletable.class, "used");

  private SendCompletable(Connection connection, Payload payload, boolean metadataPush) {
    this.connection = connection;
    this.payload = payload;
    this.metadataPush = metadataPush;
  }

  public static Completable of(Connection connection, Payload payload, boolean metadataPush) {
    return RxJavaPlugins.onAssembly(new SendCompletable(connection, payload, metadataPush));
  }

  @Override
  protected void subscribeActual(CompletableObserver observer) {
    if (!USED.compareAndSet(this, 0, 1)) {
      observer.onSubscribe(Disposable.disposed());
      observer.onError(FireAndForgetPublisher.subscribedTwice());
      return;
    }
    Payload p = payload;
    payload = null;
    try {
      observer.onSubscribe(this);
    } catch (Throwable e) {
      p.release();
      throw e;
    }
    if (disposed) {
      p.release(); // disposed in onSubscribe: nothing is sent
      return;
    }
    Throwable failure = FireAndForgetPublisher.send(connection, p, metadataPush);
    if (disposed) {
      if (failure != null) {
        RxJavaPlugins.onError(failure); // undeliverable, as RxJava's own sources report it
      }
      return;
    }
    if (failure == null) {
      observer.onComplete();
    } else {
      observer.onError(failure);
    }
  }

  @Override
  public void dispose() {
    disposed = true;
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }
}
