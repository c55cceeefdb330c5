package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The Reactive Streams TCK on {@link ResponseReader}, the caller's side of a streaming call, over a
 * stream of payloads made in memory (no connection) and signalled on a loop thread, as a
 * connection's are: demand, cancellation, the end and a failure as its subscribers see them.
 */
public class ResponseReaderTckTest extends PublisherVerification<Int32Value> {
  /** The "connection's loop" of every reader here; a daemon thread, left to the JVM's exit. */
  static final EventExecutor LOOP =
      new DefaultEventExecutor(new DefaultThreadFactory("reader-loop", true));

  public ResponseReaderTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  static Payload payload(long i) {
    return Payload.of(Unpooled.wrappedBuffer(Int32Value.of((int) i).toByteArray()));
  }

  /**
   * A reader of {@code payloads}' Int32Value responses, without a deadline; {@code payloads} is
   * subscribed to, asked and signals on {@link #LOOP}.
   */
  static Publisher<Int32Value> reader(Publisher<Payload> payloads) {
    return readerOfLoopSignals(Flux.from(payloads).subscribeOn(Schedulers.fromExecutor(LOOP)));
  }

  /** A reader of {@code payloads}, which must signal on {@link #LOOP} itself. */
  static Publisher<Int32Value> readerOfLoopSignals(Publisher<Payload> payloads) {
    return reader(payloads, CallOptions.DEFAULT, LOOP);
  }

  /** A reader of {@code payloads} with {@code options}, on {@code loop}. */
  static Publisher<Int32Value> reader(
      Publisher<Payload> payloads, CallOptions options, EventExecutor loop) {
    return new ResponseReader<>(
        () -> payloads,
        ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
        options,
        false,
        false,
        8192,
        loop,
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
