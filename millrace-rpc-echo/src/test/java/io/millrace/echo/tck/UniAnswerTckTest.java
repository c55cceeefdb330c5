package io.millrace.echo.tck;

import io.smallrye.mutiny.Uni;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the generated Mutiny binding's {@code UniAnswer} over an item known
 * at once: the item arrives while the subscriber is being subscribed, before any request, and must
 * wait for one.
 */
public class UniAnswerTckTest extends PublisherVerification<Long> {

  public UniAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return GeneratedMutiny.answer(
        elements == 0 ? Uni.createFrom().nullItem() : Uni.createFrom().item(7L));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return GeneratedMutiny.answer(
        Uni.createFrom().failure(new IllegalStateException("failed on purpose")));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
