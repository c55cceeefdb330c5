package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import io.netty.buffer.Unpooled;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on {@link ResponseReader}, the caller's side of a streaming call, over a
 * stream of payloads made in memory (no connection): demand, cancellation, the end and a failure as
 * its subscribers see them.
 */
public class ResponseReaderTckTest extends PublisherVerification<Int32Value> {

  public ResponseReaderTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  private static Payload payload(long i) {
    return Payload.of(Unpooled.wrappedBuffer(Int32Value.of((int) i).toByteArray()));
  }

  /** A reader of {@code payloads}' Int32Value responses, without a deadline (any test here). */
  static Publisher<Int32Value> reader(Publisher<Payload> payloads) {
    return new ResponseReader<>(
        () -> payloads,
        ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
        CallOptions.DEFAULT,
        false,
        false,
        8192,
        null,
        () -> {});
  }

  @Override
  public Publisher<Int32Value> createPublisher(long elements) {
    return reader(
        elements == Long.MAX_VALUE
            ? Flux.generate(
                () -> 0L,
                (i, sink) -> {
                  sink.next(payload(i));
                  return i + 1;
                })
            : Flux.range(0, (int) elements).map(ResponseReaderTckTest::payload));
  }

  @Override
  public Publisher<Int32Value> createFailedPublisher() {
    return reader(Flux.error(Status.UNAVAILABLE.withMessage("failed on purpose").asException()));
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
