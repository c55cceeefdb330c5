package io.millrace.streams.internal;

import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscription;

/** A Subscription that records what is asked of it, for a sink under test. */
final class Requests implements Subscription {
  final AtomicLong requested = new AtomicLong();
  volatile boolean cancelled;

  @Override
  public void request(long n) {
    requested.addAndGet(n);
  }

  @Override
  public void cancel() {
    cancelled = true;
  }
}
