package io.millrace.rpc;

import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** Publishers that end at once, for calls that end before they start, and one adapter. */
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

  /**
   * Stands in for a subscriber that cancelled, so that the Publisher no longer holds it (rule
   * 3.13): a payload still signalled by a racing emission is released, anything else dropped.
   */
  static final Subscriber<Object> CANCELLED =
      new Subscriber<>() {
        @Override
        public void onSubscribe(Subscription s) {
          s.cancel();
        }

        @Override
        public void onNext(Object item) {
          if (item instanceof io.millrace.streams.Payload p) {
            p.release();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onComplete() {}
      };

  /**
   * Refuses {@code subscriber}, a second one of a call's Publisher that serves one ({@code what}
   * names the call's side): it is told at once, with an IllegalStateException.
   */
  static <T> void refuseSecond(Subscriber<? super T> subscriber, String what) {
    Publishers.<T>failed(new IllegalStateException("a call's " + what + " one subscriber"))
        .subscribe(subscriber);
  }

  /** Fails each subscriber with {@code error} at once. */
  static <T> Publisher<T> failed(Throwable error) {
    return subscriber -> {
      subscriber.onSubscribe(NOOP);
      subscriber.onError(error);
    };
  }

  /**
   * Runs {@code first} for its effect (its items are dropped), then gives {@code value} and
   * completes; fails as {@code first} fails. A fire-and-forget method called as request-response
   * (by a caller that knows only unary calls, such as grpc-java's stubs) answers this way.
   */
  static <T> Publisher<T> thenJust(Publisher<?> first, T value) {
    return subscriber ->
        first.subscribe(
            new org.reactivestreams.Subscriber<Object>() {
              private final java.util.concurrent.atomic.AtomicBoolean answered =
                  new java.util.concurrent.atomic.AtomicBoolean();
              private volatile boolean requested;
              private volatile boolean completed;

              @Override
              public void onSubscribe(Subscription s) {
                subscriber.onSubscribe(
                    new Subscription() {
                      @Override
                      public void request(long n) {
                        if (n <= 0) {
                          s.cancel();
                          if (answered.compareAndSet(false, true)) {
                            subscriber.onError(
                                new IllegalArgumentException("rule 3.9: request(" + n + ")"));
                          }
                          return;
                        }
                        requested = true;
                        answer();
                      }

                      @Override
                      public void cancel() {
                        answered.set(true);
                        s.cancel();
                      }
                    });
                s.request(Long.MAX_VALUE);
              }

              @Override
              public void onNext(Object ignored) {}

              @Override
              public void onError(Throwable t) {
                if (answered.compareAndSet(false, true)) {
                  subscriber.onError(t);
                }
              }

              @Override
              public void onComplete() {
                completed = true;
                answer();
              }

              private void answer() {
                if (requested && completed && answered.compareAndSet(false, true)) {
                  subscriber.onNext(value);
                  subscriber.onComplete();
                }
              }
            });
  }

  /** Completes each subscriber at once. */
  static <T> Publisher<T> empty() {
    return subscriber -> {
      subscriber.onSubscribe(NOOP);
      subscriber.onComplete();
    };
  }
}
