package io.millrace.streams;

import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.streams.internal.OutboundSink;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on the Subscriber that sends a Publisher's payloads on a stream: each
 * Subscriber under test is the sink of a request-stream the client opened with unbounded credit.
 */
public class OutboundSinkTckTest extends SubscriberBlackboxVerification<Payload> {
  private final LinkedTransferQueue<OutboundSink> sinks = new LinkedTransferQueue<>();
  private Pair pair;

  public OutboundSinkTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @BeforeClass
  public void start() throws Exception {
    pair =
        new Pair(
            new Responder() {
              @Override
              public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
                OutboundSink sink = new OutboundSink(stream.connection().executor(), stream, 256);
                sinks.add(sink);
                return sink;
              }
            });
  }

  @AfterClass
  public void stop() throws Exception {
    pair.close();
  }

  @Override
  public Subscriber<Payload> createSubscriber() {
    pair.connection.requestStream(
        null, Payload.of("x").data(), Long.MAX_VALUE, StreamListener.NOOP);
    try {
      OutboundSink sink = sinks.poll(5, TimeUnit.SECONDS);
      if (sink == null) {
        throw new AssertionError("the server did not open the stream");
      }
      return sink;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public Payload createElement(int element) {
    return Payload.of(Integer.toString(element));
  }
}
