package io.millrace.futures.internal;

import io.millrace.streams.Payload;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A handler's CompletionStage as a one-item Publisher for the engine: its value (none if null) once
 * it is there and requested; its failure as soon as it fails, requested or not (rule 1.4);
 * cancelling cancels the stage when it is a CompletableFuture, and a value that is there or comes
 * after the cancel (requested or not) is released.
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
    Once once = new Once(subscriber, stage);
    subscriber.onSubscribe(once);
    stage.whenComplete(once::arrived);
  }

  /**
   * The subscription, its state bits set atomically: whoever sets the second of {@link #REQUESTED}
   * and {@link #ARRIVED} emits, and every end (the value delivered, a failure, an invalid request,
   * a cancel) first claims {@link #ENDED}, so exactly one of them signals or releases.
   */
  private static final class Once extends AtomicInteger implements Subscription {
    private static final long serialVersionUID = 1L;
    private static final int REQUESTED = 1;
    private static final int ARRIVED = 2;
    private static final int ENDED = 4;

    private final transient Subscriber<? super Payload> subscriber;
    private final transient CompletionStage<Payload> stage;

    /** Written before {@link #ARRIVED} is set, read after it is seen. */
    private transient Payload value;

    Once(Subscriber<? super Payload> subscriber, CompletionStage<Payload> stage) {
      this.subscriber = subscriber;
      this.stage = stage;
    }

    /** The stage completed: from whichever thread completed it, or the subscribing one. */
    void arrived(Payload v, Throwable error) {
      if (error != null) {
        if ((claimEnd() & ENDED) == 0) {
          subscriber.onError(failure(error));
        }
        return;
      }
      value = v;
      int s = getAndUpdate(x -> x | ARRIVED);
      if ((s & ENDED) != 0) {
        releaseValue(); // cancelled, or failed by an invalid request, before it came
      } else if ((s & REQUESTED) != 0) {
        emit();
      }
    }

    @Override
    public void request(long n) {
      if (n <= 0) {
        int s = claimEnd();
        if ((s & ENDED) == 0) {
          if ((s & ARRIVED) != 0) {
            releaseValue();
          }
          cancelStage();
          subscriber.onError(
              new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
        }
        return;
      }
      int s = getAndUpdate(x -> x | REQUESTED);
      if ((s & (REQUESTED | ARRIVED)) == ARRIVED) {
        emit();
      }
    }

    private void emit() {
      if ((claimEnd() & ENDED) != 0) {
        return; // cancelled in between: the cancel, which saw the value there, released it
      }
      Payload v = value;
      value = null;
      if (v != null) {
        subscriber.onNext(v);
      }
      subscriber.onComplete();
    }

    @Override
    public void cancel() {
      int s = claimEnd();
      if ((s & ENDED) != 0) {
        return;
      }
      if ((s & ARRIVED) != 0) {
        releaseValue(); // there and never emitted
      } else {
        cancelStage(); // the value, if it comes all the same, is released on arrival
      }
    }

    /** Sets {@link #ENDED}; returns the state before, whose ENDED bit says who had it first. */
    private int claimEnd() {
      return getAndUpdate(s -> s | ENDED);
    }

    private void cancelStage() {
      try {
        stage.toCompletableFuture().cancel(false);
      } catch (UnsupportedOperationException e) {
        // A stage that is not a future cannot be cancelled; its value is released when it comes.
      }
    }

    private void releaseValue() {
      Payload v = value;
      value = null;
      if (v != null) {
        v.release();
      }
    }
  }
}
