package io.millrace.grpc;

import io.millrace.streams.internal.NoopSubscription;
import org.reactivestreams.Subscriber;

/** Refusing a second subscriber of what can be read once. */
final class NoSubscription {
  private NoSubscription() {}

  /** Refuses {@code s}, a second subscriber of {@code what}. */
  static void refuseSecond(Subscriber<?> s, String what) {
    s.onSubscribe(NoopSubscription.INSTANCE);
    s.onError(new IllegalStateException(what + " can be read once"));
  }
}
