package io.millrace.testing;

import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A handler's answer that is known when it is made, in the shape Reactor gives {@code Mono.just}
 * and {@code Mono.fromCallable}: a Publisher that is also a {@link Callable}. Millrace takes such
 * an answer by calling it; this one fails any subscriber (and counts it), so a test sees which way
 * its answer was taken.
 */
public final class AnsweredAtOnce<T> implements Publisher<T>, Callable<T> {
  private final Callable<T> answer;
  private final AtomicInteger subscribed = new AtomicInteger();

  private AnsweredAtOnce(Callable<T> answer) {
    this.answer = answer;
  }

  /** The answer {@code answer} gives: a value, null (none), or what it throws. */
  public static <T> AnsweredAtOnce<T> of(Callable<T> answer) {
    return new AnsweredAtOnce<>(answer);
  }

  @Override
  public T call() throws Exception {
    return answer.call();
  }

  /** How many times it was subscribed to instead of called. */
  public int subscriptions() {
    return subscribed.get();
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    subscribed.incrementAndGet();
    subscriber.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {}
        });
    subscriber.onError(new AssertionError("subscribed to instead of called"));
  }
}
