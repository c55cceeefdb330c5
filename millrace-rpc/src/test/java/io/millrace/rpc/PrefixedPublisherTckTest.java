package io.millrace.rpc;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on {@link PrefixedPublisher}: a first item made on the first request,
 * then a source's items through the mapper (a channel's call header, then the caller's messages).
 */
public class PrefixedPublisherTckTest extends PublisherVerification<Long> {

  public PrefixedPublisherTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /**
   * {@code elements} items: 0 (the first), then the source's 1, 2, ... doubled and halved by the
   * mapper (so a mapper that is skipped or applied twice shows). Zero: no first item, an empty
   * source.
   */
  @Override
  public Publisher<Long> createPublisher(long elements) {
    if (elements == 0) {
      return new PrefixedPublisher<Long, Long>(null, Flux.empty(), i -> i, unused -> {});
    }
    Flux<Long> rest =
        elements == Long.MAX_VALUE
            ? Flux.generate(
                () -> 1L,
                (i, sink) -> {
                  sink.next(i * 2);
                  return i + 1;
                })
            : Flux.range(1, (int) elements - 1).map(i -> i * 2L);
    return new PrefixedPublisher<Long, Long>(() -> 0L, rest, i -> i / 2, unused -> {});
  }

  /**
   * The one failure that comes without demand: a second subscriber of a call's stream, refused
   * (each PrefixedPublisher is one call's messages). A failing source or mapper fails the stream
   * only once it is asked for items (the source is subscribed on the first request).
   */
  @Override
  public Publisher<Long> createFailedPublisher() {
    PrefixedPublisher<Long, Long> taken =
        new PrefixedPublisher<>(() -> 0L, Flux.just(2L), i -> i, unused -> {});
    taken.subscribe(new reactor.core.publisher.BaseSubscriber<Long>() {});
    return taken;
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
