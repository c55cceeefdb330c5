package io.millrace.echo.tck;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the generated Mutiny binding's {@code UniAnswer} over an item that
 * comes a millisecond later on Mutiny's timer thread, racing the subscriber's request.
 */
public class UniAnswerLaterTckTest extends PublisherVerification<Long> {

  public UniAnswerLaterTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    Uni<Long> later =
        elements == 0
            ? Uni.createFrom().nullItem()
            : Uni.createFrom().item(7L).onItem().delayIt().by(Duration.ofMillis(1));
    return GeneratedMutiny.answer(later);
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return GeneratedMutiny.answer(GeneratedMutiny.failingLater());
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
