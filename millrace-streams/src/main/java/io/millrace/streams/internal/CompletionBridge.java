package io.millrace.streams.internal;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The Reactive Streams side of a bridge from a library's completion type (a Completable, a {@code
 * Uni<Void>}) to the Subscriber the engine's layer gives a responder's fire-and-forget: the end is
 * passed on once, invalid demand fails it (rule 3.9), and cancel reaches the library's
 * subscription, whichever threads those signals come from. Each flavour's subclass is also its
 * library's observer and calls {@link #upstreamReady}, {@link #complete} and {@link #fail}.
 */
public abstract class CompletionBridge implements Subscription {
  private final Subscriber<? super Void> actual;
  private volatile int done;

  private static final AtomicIntegerFieldUpdater<CompletionBridge> DONE =
      AtomicIntegerFieldUpdater.newUpdater(CompletionBridge.class, "done");

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
    if (DONE.compareAndSet(this, 0, 1)) {
      actual.onComplete();
    }
  }

  protected final void fail(Throwable t) {
    if (DONE.compareAndSet(this, 0, 1)) {
      actual.onError(t);
    }
  }

  /** Nothing is emitted: demand matters only when it is invalid (rule 3.9). */
  @Override
  public final void request(long n) {
    if (n <= 0 && DONE.compareAndSet(this, 0, 1)) {
      cancelUpstream();
      actual.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
    }
  }

  @Override
  public final void cancel() {
    done = 1;
    cancelUpstream();
  }
}
