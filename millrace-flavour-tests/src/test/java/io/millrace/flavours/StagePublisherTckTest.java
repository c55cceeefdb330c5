package io.millrace.flavours;

import io.millrace.futures.internal.StagePublisher;
import io.millrace.streams.Payload;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the futures flavour's {@link StagePublisher}: a handler's
 * CompletionStage as the one-item Publisher the engine subscribes, over a future completed a
 * millisecond later on another thread (none for a null value).
 */
public class StagePublisherTckTest extends PublisherVerification<Payload> {

  public StagePublisherTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  private static CompletableFuture<Payload> later(Payload value) {
    return CompletableFuture.supplyAsync(
        () -> value, CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS));
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    return new StagePublisher(later(elements == 0 ? null : Payload.of(new byte[] {7})));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return new StagePublisher(
        later(null)
            .thenApply(
                x -> {
                  throw new IllegalStateException("failed on purpose");
                }));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
