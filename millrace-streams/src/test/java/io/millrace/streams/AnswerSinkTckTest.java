package io.millrace.streams;

import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.streams.internal.AnswerSink;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on the Subscriber that sends a request-response's answer: each
 * Subscriber under test is the sink of a request-response the client made.
 */
public class AnswerSinkTckTest extends SubscriberBlackboxVerification<Payload> {
  private final LinkedTransferQueue<AnswerSink> sinks = new LinkedTransferQueue<>();
  private Pair pair;

  public AnswerSinkTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @BeforeClass
  public void start() throws Exception {
    pair =
        new Pair(
            new Responder() {
              @Override
              public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
                AnswerSink sink = new AnswerSink(stream);
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
    pair.connection.requestResponse(null, Payload.of("x").data(), StreamListener.NOOP);
    try {
      AnswerSink sink = sinks.poll(5, TimeUnit.SECONDS);
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
