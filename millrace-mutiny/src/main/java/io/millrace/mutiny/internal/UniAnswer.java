package io.millrace.mutiny.internal;

import io.millrace.core.internal.Signatures;
import io.millrace.streams.internal.CompletionBridge;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A handler's {@code Uni<Void>} (fire-and-forget, metadata push) as the Publisher the engine's
 * layer subscribes for its end: the Uni is subscribed directly, where converting it to a Multi and
 * adapting Flow to Reactive Streams took five objects per call and a strict subscriber's atomics.
 */
public final class UniAnswer implements Publisher<Void> {
  static {
    Signatures.resolve(
        UniAnswer.class, Bridge.class); // so that C2 may inline calls to their methods
  }

  private final Uni<Void> source;

  private UniAnswer(Uni<Void> source) {
    this.source = source;
  }

  /** Null (nothing to subscribe) for null. */
  public static Publisher<Void> of(Uni<Void> source) {
    return source == null ? null : new UniAnswer(source);
  }

  @Override
  public void subscribe(Subscriber<? super Void> subscriber) {
    source.subscribe().withSubscriber(new Bridge(subscriber));
  }

  private static final class Bridge extends CompletionBridge implements UniSubscriber<Void> {
    private UniSubscription upstream;

    Bridge(Subscriber<? super Void> actual) {
      super(actual);
    }

    @Override
    public void onSubscribe(UniSubscription subscription) {
      upstream = subscription;
      upstreamReady();
    }

    @Override
    public void onItem(Void item) {
      complete();
    }

    @Override
    public void onFailure(Throwable failure) {
      fail(failure);
    }

    @Override
    protected void cancelUpstream() {
      upstream.cancel();
    }
  }
}
