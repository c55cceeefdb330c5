package io.millrace.streams.internal;

import org.reactivestreams.Subscription;

/** A subscription that ignores every call: for subscribers failed before anything started. */
public enum NoopSubscription implements Subscription {
  INSTANCE;

  @Override
  public void request(long n) {}

  @Override
  public void cancel() {}
}
