package io.millrace.rxjava.internal;

import io.millrace.streams.internal.CompletionBridge;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.CompletableObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A handler's Completable (fire-and-forget, metadata push) as the Publisher the engine's layer
 * subscribes for its end. {@code toFlowable()} took five objects per call and a {@code
 * StrictSubscriber} with four atomics; this takes two. {@code Completable.complete()} is not
 * subscribed at all: it has nothing to run and cannot fail.
 */
public final class CompletableAnswer implements Publisher<Void> {
  private static final Completable COMPLETE = Completable.complete();

  private final Completable source;

  private CompletableAnswer(Completable source) {
    this.source = source;
  }

  /** Null (nothing to subscribe) for null and for {@code Completable.complete()}. */
  public static Publisher<Void> of(Completable source) {
    return source == null || source == COMPLETE ? null : new CompletableAnswer(source);
  }

  @Override
  public void subscribe(Subscriber<? super Void> subscriber) {
    source.subscribe(new Bridge(subscriber));
  }

  private static final class Bridge extends CompletionBridge implements CompletableObserver {
    private Disposable upstream;

    Bridge(Subscriber<? super Void> actual) {
      super(actual);
    }

    @Override
    public void onSubscribe(Disposable d) {
      upstream = d;
      upstreamReady();
    }

    @Override
    public void onComplete() {
      complete();
    }

    @Override
    public void onError(Throwable e) {
      fail(e);
    }

    @Override
    protected void cancelUpstream() {
      upstream.dispose();
    }
  }
}
