package io.millrace.rpc;

import io.millrace.streams.Payload;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on {@link ResponsePublisher} for a routing caller (plain payloads, a
 * failure as ERROR) on a call with a deadline, whose emissions and end take the deadline's lock.
 */
public class ResponsePublisherRoutingTckTest extends PublisherVerification<Payload> {

  public ResponsePublisherRoutingTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** A call with an hour to run: the deadline is there, and never passes within a test. */
  private static ServerContext withDeadline() {
    return new ServerContext(
        TestService.served(TestService.COUNT),
        Headers.EMPTY,
        TimeUnit.HOURS.toMicros(1),
        ImmediateEventExecutor.INSTANCE,
        16,
        null,
        null);
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    return ResponsePublisherTckTest.responses(
        withDeadline(), true, ResponsePublisherTckTest.messages(elements));
  }

  /** A handler that fails: a routing caller hears it as an error, without asking for anything. */
  @Override
  public Publisher<Payload> createFailedPublisher() {
    return ResponsePublisherTckTest.responses(
        withDeadline(),
        true,
        Flux.error(Status.UNAVAILABLE.withMessage("failed on purpose").asException()));
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
