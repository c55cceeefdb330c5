package io.millrace.streams;

import io.millrace.streams.internal.Relay;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on {@link Relay}, as the Reactor flavour uses it: a Flux whose
 * subscribers are relayed as {@link CoreSubscriber}s, one relay each.
 */
public class RelayTckTest extends PublisherVerification<Long> {

  public RelayTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  private static final class ReactorRelay<T> extends Relay<T> implements CoreSubscriber<T> {
    ReactorRelay(Subscriber<? super T> actual) {
      super(actual);
    }
  }

  /** As the Reactor flavour's DirectAnswer: a relay for each subscriber. */
  private static <T> Publisher<T> relayed(Flux<T> source) {
    return subscriber -> source.subscribe(new ReactorRelay<>(subscriber));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return relayed(
        elements == Long.MAX_VALUE
            ? Flux.generate(
                () -> 0L,
                (i, sink) -> {
                  sink.next(i);
                  return i + 1;
                })
            : Flux.range(0, (int) elements).map(Long::valueOf));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return relayed(Flux.<Long>error(new IllegalStateException("failed on purpose")));
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
