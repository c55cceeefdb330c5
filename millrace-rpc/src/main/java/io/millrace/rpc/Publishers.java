package io.millrace.rpc;

import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;

/** Publishers that end at once, for calls that end before they start. */
final class Publishers {
  private Publishers() {}

  /** Takes no demand and cancels nothing: for a subscriber told the end right after. */
  static final Subscription NOOP =
      new Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
      };

  /** Fails each subscriber with {@code error} at once. */
  static <T> Publisher<T> failed(Throwable error) {
    return subscriber -> {
      subscriber.onSubscribe(NOOP);
      subscriber.onError(error);
    };
  }

  /** Completes each subscriber at once. */
  static <T> Publisher<T> empty() {
    return subscriber -> {
      subscriber.onSubscribe(NOOP);
      subscriber.onComplete();
    };
  }
}
