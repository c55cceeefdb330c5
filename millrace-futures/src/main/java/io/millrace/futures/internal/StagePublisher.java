package io.millrace.futures.internal;

import io.millrace.streams.Payload;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A handler's CompletionStage as a one-item Publisher for the engine: its value (none if null) on
 * the first request; cancelling cancels the stage when it is a CompletableFuture, and a value that
 * is there or comes after the cancel (requested or not) is released.
 */
public final class StagePublisher implements Publisher<Payload> {
  private final CompletionStage<Payload> stage;

  public StagePublisher(CompletionStage<Payload> stage) {
    this.stage = stage;
  }

  /**
   * What a stage's failure tells the peer: a CompletionException's cause (the JDK wraps what a
   * dependent stage threw), else the failure itself.
   */
  public static Throwable failure(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    subscriber.onSubscribe(new Once(subscriber));
  }

  private final class Once extends AtomicBoolean implements Subscription {
    private static final long serialVersionUID = 1L;
    private final Subscriber<? super Payload> subscriber;
    private volatile boolean cancelled;

    Once(Subscriber<? super Payload> subscriber) {
      this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
      if (cancelled || !compareAndSet(false, true)) {
        return;
      }
      if (n <= 0) {
        cancelled = true;
        subscriber.onError(new IllegalArgumentException("request-n must be positive: " + n));
        return;
      }
      stage.whenComplete(
          (value, error) -> {
            if (cancelled) {
              if (value != null) {
                value.release();
              }
              return;
            }
            if (error != null) {
              subscriber.onError(failure(error));
              return;
            }
            if (value != null) {
              subscriber.onNext(value);
            }
            subscriber.onComplete();
          });
    }

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      try {
        stage.toCompletableFuture().cancel(false);
      } catch (UnsupportedOperationException e) {
        // A stage that is not a future cannot be cancelled; its value is released when it comes.
      }
      if (compareAndSet(false, true)) {
        // Never requested: no request will take the value, which may be there already (a
        // completed future cannot be cancelled) or come later. Released either way.
        stage.whenComplete(
            (value, error) -> {
              if (value != null) {
                value.release();
              }
            });
      }
    }
  }
}
