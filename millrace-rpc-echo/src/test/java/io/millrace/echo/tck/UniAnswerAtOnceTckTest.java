package io.millrace.echo.tck;

import io.netty.util.concurrent.ImmediateEventExecutor;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the generated Mutiny binding's {@code UniAnswer} as a unary method
 * makes it on the call's loop, where the Uni is subscribed at once: an item known then is handed
 * over as a Scalar, one that comes a millisecond later is held until the TCK asks for it, and no
 * item ends the answer without one.
 */
public class UniAnswerAtOnceTckTest extends PublisherVerification<Long> {

  /** Alternates an item known at once with one that comes later. */
  private final AtomicInteger made = new AtomicInteger();

  public UniAnswerAtOnceTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  private static <T> Publisher<T> atOnce(Uni<T> uni) {
    return GeneratedMutiny.answer(uni, Contexts.on(ImmediateEventExecutor.INSTANCE));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    if (elements == 0) {
      return atOnce(Uni.createFrom().nullItem());
    }
    return atOnce(
        made.getAndIncrement() % 2 == 0
            ? Uni.createFrom().item(7L)
            : Uni.createFrom().item(7L).onItem().delayIt().by(Duration.ofMillis(1)));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return atOnce(GeneratedMutiny.failingLater());
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
