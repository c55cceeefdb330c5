package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.concurrent.ImmediateEventExecutor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on {@link ResponsePublisher}, the server's side of a streaming call, for
 * a native caller: each of the handler's messages is one payload (the first with the response
 * headers); a call that ends well with no trailers sends nothing more.
 */
public class ResponsePublisherTckTest extends PublisherVerification<Payload> {
  /**
   * The TCK's subscribers keep what they are given without releasing it: the payloads here are on
   * the heap, outside the leak detector, and left to the garbage collector.
   */
  static final ByteBufAllocator HEAP = new UnpooledByteBufAllocator(false, true);

  public ResponsePublisherTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** {@code elements} Int32Value messages 0, 1, 2, ... (endless for Long.MAX_VALUE). */
  static Flux<Int32Value> messages(long elements) {
    return elements == Long.MAX_VALUE
        ? Flux.generate(
            () -> 0,
            (i, sink) -> {
              sink.next(Int32Value.of(i));
              return i + 1;
            })
        : Flux.range(0, (int) elements).map(Int32Value::of);
  }

  /** A streaming call's responses from {@code source}, for a native or a routing caller. */
  static ResponsePublisher<Int32Value> responses(
      ServerContext context, boolean routing, Publisher<Int32Value> source) {
    return new ResponsePublisher<>(
        context,
        ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
        false,
        routing,
        HEAP,
        source,
        () -> {});
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    return responses(TestService.echoContext(), false, messages(elements));
  }

  /**
   * A native caller is told a failure in a trailer, a payload that waits for demand like any other,
   * so the failure that comes without demand is the refusal of a second subscriber.
   */
  @Override
  public Publisher<Payload> createFailedPublisher() {
    ResponsePublisher<Int32Value> taken =
        responses(TestService.echoContext(ImmediateEventExecutor.INSTANCE), false, messages(1));
    taken.subscribe(new BaseSubscriber<Payload>() {});
    return taken;
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
