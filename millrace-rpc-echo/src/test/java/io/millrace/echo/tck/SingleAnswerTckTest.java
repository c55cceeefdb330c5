package io.millrace.echo.tck;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.reactivex.rxjava3.core.Single;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the generated RxJava binding's {@code SingleAnswer} off the call's
 * loop: the Single is subscribed when the TCK subscribes, and answers at once or a millisecond
 * later on RxJava's computation thread.
 */
public class SingleAnswerTckTest extends PublisherVerification<Long> {

  public SingleAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** Alternates an answer known at once with one that comes later. */
  private final java.util.concurrent.atomic.AtomicInteger made =
      new java.util.concurrent.atomic.AtomicInteger();

  /** The loop of the calls: not the TCK's threads, so each Single is subscribed late. */
  EventExecutor loop() {
    return GlobalEventExecutor.INSTANCE;
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    if (elements == 0) {
      notVerified("a Single always has its one item");
    }
    Single<Long> single =
        made.getAndIncrement() % 2 == 0
            ? Single.just(7L)
            : Single.timer(1, TimeUnit.MILLISECONDS).map(x -> 7L);
    return GeneratedRxJava.answer(single, Contexts.on(loop()));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return GeneratedRxJava.answer(
        Single.<Long>error(new IllegalStateException("failed on purpose")), Contexts.on(loop()));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
