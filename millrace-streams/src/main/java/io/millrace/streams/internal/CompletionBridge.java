package io.millrace.streams.internal;

import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The Reactive Streams side of a bridge from a library's completion type (a Completable, a {@code
 * Uni<Void>}) to the Subscriber the engine's layer gives a responder's fire-and-forget: the end is
 * passed on once, invalid demand fails it (rule 3.9), and cancel reaches the library's
 * subscription. Each flavour's subclass is also its library's observer and calls {@link
 * #upstreamReady}, {@link #complete} and {@link #fail}.
 */
public abstract class CompletionBridge implements Subscription {
  private final Subscriber<? super Void> actual;
  private volatile boolean done;

  protected CompletionBridge(Subscriber<? super Void> actual) {
    if (actual == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    this.actual = actual;
  }

  /** Ends the library's subscription (dispose, cancel). */
  protected abstract void cancelUpstream();

  /** Once the library's subscription is kept: passes this on as the subscription. */
  protected final void upstreamReady() {
    actual.onSubscribe(this);
  }

  protected final void complete() {
    if (!done) {
      done = true;
      actual.onComplete();
    }
  }

  protected final void fail(Throwable t) {
    if (!done) {
      done = true;
      actual.onError(t);
    }
  }

  /** Nothing is emitted: demand matters only when it is invalid (rule 3.9). */
  @Override
  public final void request(long n) {
    if (n <= 0 && !done) {
      done = true;
      cancelUpstream();
      actual.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
    }
  }

  @Override
  public final void cancel() {
    done = true;
    cancelUpstream();
  }
}
