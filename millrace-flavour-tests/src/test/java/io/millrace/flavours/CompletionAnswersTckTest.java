package io.millrace.flavours;

import io.millrace.mutiny.internal.UniAnswer;
import io.millrace.rxjava.internal.CompletableAnswer;
import io.reactivex.rxjava3.core.Completable;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the answers that only complete or fail (a fire-and-forget or metadata
 * push handler's end): RxJava's {@link CompletableAnswer} and Mutiny's {@link UniAnswer}, each over
 * a source that ends a millisecond later on its library's own thread.
 */
public class CompletionAnswersTckTest extends PublisherVerification<Void> {
  private final boolean mutiny;

  @Factory
  public static Object[] both() {
    return new Object[] {new CompletionAnswersTckTest(false), new CompletionAnswersTckTest(true)};
  }

  public CompletionAnswersTckTest(boolean mutiny) {
    super(new TestEnvironment(2_000, 50));
    this.mutiny = mutiny;
  }

  private static Uni<Void> mutinyLater() {
    return Uni.createFrom().voidItem().onItem().delayIt().by(Duration.ofMillis(1));
  }

  @Override
  public Publisher<Void> createPublisher(long elements) {
    return mutiny
        ? UniAnswer.of(mutinyLater())
        : CompletableAnswer.of(Completable.timer(1, TimeUnit.MILLISECONDS));
  }

  @Override
  public Publisher<Void> createFailedPublisher() {
    IllegalStateException failure = new IllegalStateException("failed on purpose");
    return mutiny
        ? UniAnswer.of(mutinyLater().onItem().failWith(() -> failure))
        : CompletableAnswer.of(
            Completable.timer(1, TimeUnit.MILLISECONDS).andThen(Completable.error(failure)));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 0;
  }
}
