package io.millrace.streams.internal;

import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A Publisher that makes a new one-call Publisher for each subscriber, so that retry and repeat
 * make the call again; a factory that throws or returns null fails that subscriber.
 */
public final class Deferred<T> implements Publisher<T> {
  private final Supplier<? extends Publisher<T>> factory;

  public Deferred(Supplier<? extends Publisher<T>> factory) {
    this.factory = factory;
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    Publisher<T> call;
    try {
      call = factory.get();
      if (call == null) {
        throw new NullPointerException("no payload to send");
      }
    } catch (Throwable t) {
      subscriber.onSubscribe(NoopSubscription.INSTANCE);
      subscriber.onError(t);
      return;
    }
    call.subscribe(subscriber);
  }
}
