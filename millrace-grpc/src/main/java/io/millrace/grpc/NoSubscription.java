package io.millrace.grpc;

import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** The Subscription of a subscriber refused at once. */
enum NoSubscription implements Subscription {
  INSTANCE;

  @Override
  public void request(long n) {}

  @Override
  public void cancel() {}

  /** Refuses {@code s}, a second subscriber of what can be read once. */
  static void refuseSecond(Subscriber<?> s, String what) {
    s.onSubscribe(INSTANCE);
    s.onError(new IllegalStateException(what + " can be read once"));
  }
}
