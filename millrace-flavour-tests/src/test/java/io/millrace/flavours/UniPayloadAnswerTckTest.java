package io.millrace.flavours;

import io.millrace.mutiny.internal.UniPayloadAnswer;
import io.millrace.streams.Payload;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the Mutiny responder's request-response answer ({@link
 * UniPayloadAnswer}) over a Uni whose item (or none, or failure) comes a millisecond later on
 * Mutiny's timer thread, racing the subscriber's request. (One there at once is handed over as a
 * {@code Scalar}, which {@code ScalarKnownTckTest} verifies.)
 */
public class UniPayloadAnswerTckTest extends PublisherVerification<Payload> {

  public UniPayloadAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    Payload item = elements == 0 ? null : Payload.of(new byte[] {7});
    return UniPayloadAnswer.of(later().onItem().transform(x -> item));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return UniPayloadAnswer.of(
        later()
            .onItem()
            .transformToUni(
                x ->
                    Uni.createFrom()
                        .<Payload>failure(new IllegalStateException("failed on purpose"))));
  }

  private static Uni<Integer> later() {
    return Uni.createFrom().item(7).onItem().delayIt().by(Duration.ofMillis(1));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
