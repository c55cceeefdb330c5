package io.millrace.streams;

import io.millrace.streams.internal.Scalar;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link Scalar#known}'s Publisher, subscribed as a Publisher (the
 * runtime mostly takes its outcome by a plain call instead): an item on request, an end without one
 * at once.
 */
public class ScalarKnownTckTest extends PublisherVerification<Long> {

  public ScalarKnownTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return Scalar.known(elements == 0 ? null : 7L, null);
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Scalar.known(null, new IllegalStateException("failed on purpose"));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
