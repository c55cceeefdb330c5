package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK on {@link AnsweredCall}, a unary call whose handler answered at once:
 * one payload (the response, or a trailer with the failure) for a native caller.
 *
 * <p>A request-response call always sends a native caller one payload, so the TCK's empty Publisher
 * (asked for by the checks of {@code subscribe} alone, and by the optional check that an empty
 * stream completes, which does not apply) is a call that answered nothing: its one payload is the
 * INTERNAL trailer.
 */
public class AnsweredCallTckTest extends PublisherVerification<Payload> {

  public AnsweredCallTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  private static AnsweredCall<Int32Value> call(boolean routing, Mono<Int32Value> answer) {
    return new AnsweredCall<>(
        TestService.echoContext(),
        ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
        routing,
        ResponsePublisherTckTest.HEAP,
        answer,
        () -> {});
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    return call(false, elements == 0 ? Mono.empty() : Mono.just(Int32Value.of(7)));
  }

  /**
   * A failed answer is told when the caller asks (as the response would be), so the failure that
   * comes without demand is the refusal of a second subscriber: the call is answered once.
   */
  @Override
  public Publisher<Payload> createFailedPublisher() {
    AnsweredCall<Int32Value> taken =
        call(true, Mono.error(Status.UNAVAILABLE.withMessage("failed on purpose").asException()));
    taken.subscribe(
        new BaseSubscriber<Payload>() {
          @Override
          protected void hookOnError(Throwable expected) {}
        });
    return taken;
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
