package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.concurrent.ForkJoinPool;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link UnaryResponse}'s own Publisher: a unary observer handler, run
 * off the call's loop when the TCK subscribes, that answers or fails later from another thread.
 */
public class UnaryResponseTckTest extends PublisherVerification<Int32Value> {

  public UnaryResponseTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** Off the call's loop: the handler runs when the TCK subscribes, and answers later. */
  private static ServerContext context() {
    return TestService.echoContext(GlobalEventExecutor.INSTANCE);
  }

  @Override
  public Publisher<Int32Value> createPublisher(long elements) {
    return UnaryResponse.answer(
        context(),
        o ->
            ForkJoinPool.commonPool()
                .execute(
                    () -> {
                      if (elements > 0) {
                        o.onNext(Int32Value.of(7));
                      }
                      o.onCompleted();
                    }));
  }

  @Override
  public Publisher<Int32Value> createFailedPublisher() {
    return UnaryResponse.answer(
        context(),
        o ->
            ForkJoinPool.commonPool()
                .execute(
                    () ->
                        o.onError(
                            Status.UNAVAILABLE.withMessage("failed on purpose").asException())));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
