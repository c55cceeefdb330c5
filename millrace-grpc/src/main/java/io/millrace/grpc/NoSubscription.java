package io.millrace.grpc;

import io.millrace.streams.internal.NoopSubscription;
import org.reactivestreams.Subscriber;

/** Refusing a second subscriber of what can be read once. */
final class NoSubscription {
  private NoSubscription() {}

  /**
   * Stands in for a subscriber that cancelled, so that what it subscribed to no longer holds it
   * (rule 3.13); what still reaches it is dropped.
   */
  static final Subscriber<Object> CANCELLED =
      new Subscriber<>() {
        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
          s.cancel();
        }

        @Override
        public void onNext(Object item) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onComplete() {}
      };

  /** Refuses {@code s}, a second subscriber of {@code what}. */
  static void refuseSecond(Subscriber<?> s, String what) {
    s.onSubscribe(NoopSubscription.INSTANCE);
    s.onError(new IllegalStateException(what + " can be read once"));
  }
}
