package io.millrace.flavours;

import io.millrace.reactor.internal.DirectAnswer;
import java.util.concurrent.Callable;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK on the Reactor flavour's answer known at once ({@code Mono.just}, {@code
 * Mono.empty}, {@code Mono.error}): {@link DirectAnswer#of} keeps such a source callable, and when
 * it is subscribed rather than called it must still follow the rules.
 */
public class ReactorKnownAnswerTckTest extends PublisherVerification<Long> {

  public ReactorKnownAnswerTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    Publisher<Long> answer = DirectAnswer.of(elements == 0 ? Mono.<Long>empty() : Mono.just(7L));
    if (!(answer instanceof Callable)) {
      throw new AssertionError("a known answer is no longer callable: this test lost its subject");
    }
    return answer;
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return DirectAnswer.of(Mono.<Long>error(new IllegalStateException("failed on purpose")));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
