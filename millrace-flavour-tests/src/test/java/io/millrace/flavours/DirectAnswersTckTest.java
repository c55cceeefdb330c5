package io.millrace.flavours;

import io.reactivex.rxjava3.core.Flowable;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The Reactive Streams TCK on the Reactor and RxJava flavours' {@code DirectAnswer}s, the classes
 * themselves (their relays to Millrace's subscribers as the library's own subscriber types), over a
 * source that emits on the library's own scheduler, racing the subscriber's requests.
 */
public class DirectAnswersTckTest extends PublisherVerification<Long> {
  private final boolean rxjava;

  @Factory
  public static Object[] both() {
    return new Object[] {new DirectAnswersTckTest(false), new DirectAnswersTckTest(true)};
  }

  public DirectAnswersTckTest(boolean rxjava) {
    super(new TestEnvironment(2_000, 50));
    this.rxjava = rxjava;
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    if (rxjava) {
      return io.millrace.rxjava.internal.DirectAnswer.of(
          Flowable.rangeLong(0, elements)
              .observeOn(io.reactivex.rxjava3.schedulers.Schedulers.computation(), false, 4));
    }
    return io.millrace.reactor.internal.DirectAnswer.of(
        Flux.range(0, (int) elements).map(Long::valueOf).publishOn(Schedulers.parallel(), 4));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    IllegalStateException failure = new IllegalStateException("failed on purpose");
    return rxjava
        ? io.millrace.rxjava.internal.DirectAnswer.of(Flowable.<Long>error(failure))
        : io.millrace.reactor.internal.DirectAnswer.of(Flux.<Long>error(failure));
  }

  /**
   * Not verified, by design: the relay gives Millrace's own subscribers (the only ones it is used
   * for, {@code Relay.Target}) the relaxed order of the library's own subscriber types, in which a
   * request made inside {@code onSubscribe} goes upstream at once, so a source on another thread
   * may emit before that {@code onSubscribe} has returned. Millrace's subscribers request last in
   * {@code onSubscribe} and accept that; the TCK's subscriber, which does more after its request,
   * does not.
   */
  @Override
  public void stochastic_spec103_mustSignalOnMethodsSequentially() {
    notVerified("the relay serves Millrace's own subscribers only, in the library's relaxed order");
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
