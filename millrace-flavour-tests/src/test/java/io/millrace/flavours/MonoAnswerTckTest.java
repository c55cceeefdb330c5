package io.millrace.flavours;

import io.millrace.reactor.internal.MonoAnswer;
import io.millrace.streams.Payload;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK on the Reactor responder's request-response answer ({@link MonoAnswer})
 * over a Mono whose item (or none, or failure) comes a millisecond later on Reactor's timer thread,
 * racing the subscriber's request. (One there at once is handed over as a {@code Scalar}, which
 * {@code ScalarKnownTckTest} verifies.)
 */
public class MonoAnswerTckTest extends PublisherVerification<Payload> {

  public MonoAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    Mono<Long> later = Mono.delay(Duration.ofMillis(1));
    return MonoAnswer.of(
        elements == 0 ? later.then(Mono.empty()) : later.map(x -> Payload.of(new byte[] {7})));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return MonoAnswer.of(
        Mono.delay(Duration.ofMillis(1))
            .then(Mono.error(new IllegalStateException("failed on purpose"))));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
