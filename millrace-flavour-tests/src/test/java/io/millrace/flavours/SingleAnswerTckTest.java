package io.millrace.flavours;

import io.millrace.rxjava.internal.SingleAnswer;
import io.millrace.streams.Payload;
import io.reactivex.rxjava3.core.Single;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the RxJava responder's request-response answer ({@link SingleAnswer})
 * over a Single that answers a millisecond later on RxJava's computation thread, racing the
 * subscriber's request. (One that answers at once is handed over as a {@code Scalar}, which {@code
 * ScalarKnownTckTest} verifies.)
 */
public class SingleAnswerTckTest extends PublisherVerification<Payload> {

  public SingleAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    if (elements == 0) {
      notVerified("a Single always has its one item");
    }
    return SingleAnswer.of(
        Single.timer(1, TimeUnit.MILLISECONDS).map(x -> Payload.of(new byte[] {7})));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return SingleAnswer.of(
        Single.timer(1, TimeUnit.MILLISECONDS)
            .flatMap(x -> Single.error(new IllegalStateException("failed on purpose"))));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
