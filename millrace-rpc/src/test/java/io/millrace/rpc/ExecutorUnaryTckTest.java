package io.millrace.rpc;

import java.util.concurrent.ForkJoinPool;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link ExecutorUnary}: a blocking unary handler run on another
 * thread, whose answer goes out from whichever of that thread and the requesting one comes second.
 */
public class ExecutorUnaryTckTest extends PublisherVerification<String> {

  public ExecutorUnaryTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<String> createPublisher(long elements) {
    // null answers complete empty, as the runtime's INTERNAL needs
    return Blocking.onExecutor(ForkJoinPool.commonPool(), () -> elements > 0 ? "x" : null);
  }

  @Override
  public Publisher<String> createFailedPublisher() {
    return Blocking.onExecutor(
        ForkJoinPool.commonPool(),
        () -> {
          throw Status.UNAVAILABLE.withMessage("failed on purpose").asException();
        });
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
