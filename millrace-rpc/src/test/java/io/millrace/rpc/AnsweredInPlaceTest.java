package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.streams.Payload;
import io.millrace.testing.AnsweredAtOnce;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@link AnsweredCall#sendNow} without a connection: a call answered in place must put on its
 * request-response stream exactly what an {@link AnsweredCall} sends through a subscriber, for
 * every outcome, native and routing callers alike.
 */
class AnsweredInPlaceTest {

  @Test
  void aMessage_isTheStreamsOnePayload() {
    assertSameOnTheStream(c -> text("hi"), false, "message hi", "complete");
    assertSameOnTheStream(c -> text("hi"), true, "message hi", "complete");
  }

  @Test
  void headersAndTrailersSetByTheHandler_goWithTheMessage() {
    Handler withMetadata =
        c -> {
          c.responseHeaders().put("h", "1");
          c.trailers().put("t", "2");
          return text("hi");
        };
    assertSameOnTheStream(
        withMetadata,
        false,
        "message hi headers Headers{h=1} status OK trailers Headers{t=2}",
        "complete");
    assertSameOnTheStream(withMetadata, true, "message hi", "complete"); // routing: no metadata
  }

  @Test
  void aFailure_isATrailer_orAnApplicationErrorForRoutingCallers() {
    Handler failing =
        c -> {
          c.trailers().put("t", "2");
          throw Status.of(Status.Code.NOT_FOUND).withMessage("no such").asException();
        };
    assertSameOnTheStream(failing, false, "trailer NOT_FOUND trailers Headers{t=2}", "complete");
    assertSameOnTheStream(
        failing, true, "error APPLICATION_ERROR NOT_FOUND: no such"); // as a routing caller sees
  }

  @Test
  void aStatusExceptionsOwnTrailers_goWithTheFailure() {
    Handler failing =
        c -> {
          c.trailers().put("t", "2");
          throw Status.of(Status.Code.NOT_FOUND)
              .withMessage("no such")
              .asException(new Headers().put("x-why", "gone"));
        };
    assertSameOnTheStream(
        failing, false, "trailer NOT_FOUND trailers Headers{t=2, x-why=gone}", "complete");
  }

  @Test
  void anErrorThrownByAHandler_failsItsCallOnly() {
    assertSameOnTheStream(
        c -> {
          throw new ExceptionInInitializerError("a class failed to load");
        },
        false,
        "trailer UNKNOWN",
        "complete");
  }

  @Test
  void noValue_andAThrownRuntimeException_endTheCallWithTheirStatus() {
    assertSameOnTheStream(c -> null, false, "trailer INTERNAL", "complete");
    assertSameOnTheStream(
        c -> {
          throw new IllegalStateException("boom");
        },
        false,
        "trailer UNKNOWN",
        "complete");
  }

  @Test
  void anOkStatusThrown_completesTheStreamWithoutAPayload() {
    Handler ok =
        c -> {
          throw Status.OK.asException();
        };
    assertSameOnTheStream(ok, false, "complete");
    assertSameOnTheStream(ok, true, "complete");
  }

  @Test
  void aMessageThatWillNotSerialize_endsTheCallWithInternal() {
    // Longer than a frame batch takes, so it is serialized first, and that fails.
    StringValue tooLong = text("x".repeat(PayloadEncoder.IN_FRAME_MAX_BYTES + 1));
    Marshaller<StringValue> broken =
        new Marshaller<>() {
          private final ProtobufMarshaller<StringValue> real =
              ProtobufMarshaller.of(StringValue.getDefaultInstance());

          @Override
          public ByteBuf serialize(StringValue value, ByteBufAllocator alloc) {
            throw Status.INTERNAL.withMessage("could not serialize").asException();
          }

          @Override
          public StringValue parse(ByteBuf data) {
            return real.parse(data);
          }

          @Override
          public PayloadEncoder<StringValue> encoder() {
            return real.encoder();
          }
        };
    RecordingStream stream = new RecordingStream();
    AnsweredCall.sendNow(
        stream,
        TestService.echoContext(),
        broken,
        false,
        ByteBufAllocator.DEFAULT,
        AnsweredAtOnce.of(() -> tooLong));
    assertThat(stream.record).containsExactly("trailer INTERNAL", "complete");
  }

  // ------------------------------------------------------------------ the comparison

  /** A unary handler's work: what it answers, given its call's context. */
  private interface Handler {
    StringValue answer(ServerContext context) throws Exception;
  }

  /**
   * Runs {@code handler} both ways, each with a context of its own, and checks that the stream saw
   * {@code expected} and that an AnsweredCall's subscriber saw the same.
   */
  private static void assertSameOnTheStream(Handler handler, boolean routing, String... expected) {
    RecordingStream stream = new RecordingStream();
    ServerContext inPlace = TestService.echoContext();
    AnsweredCall.sendNow(
        stream,
        inPlace,
        TestService.ECHO.responseMarshaller(),
        routing,
        ByteBufAllocator.DEFAULT,
        AnsweredAtOnce.of(answer(handler, inPlace)));
    assertThat(stream.record).containsExactly(expected);

    ServerContext published = TestService.echoContext();
    AnsweredCall<StringValue> call =
        new AnsweredCall<>(
            published,
            TestService.ECHO.responseMarshaller(),
            routing,
            ByteBufAllocator.DEFAULT,
            AnsweredAtOnce.of(answer(handler, published)),
            () -> {});
    List<String> seen = new ArrayList<>();
    call.subscribe(
        new Subscriber<Payload>() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(1);
          }

          @Override
          public void onNext(Payload p) {
            try {
              seen.add(describe(p.metadata(), p.data()));
            } finally {
              p.release();
            }
          }

          @Override
          public void onError(Throwable t) {
            seen.add(describe(t));
          }

          @Override
          public void onComplete() {
            seen.add("complete");
          }
        });
    assertThat(seen).containsExactly(expected);
  }

  private static Callable<StringValue> answer(Handler handler, ServerContext context) {
    return () -> handler.answer(context);
  }

  private static String describe(ByteBuf metadata, ByteBuf data) {
    if (metadata == null) {
      return "message " + TestService.ECHO.responseMarshaller().parse(data).getValue();
    }
    ResponseMetadata m = ResponseMetadata.decode(metadata, 8192);
    StringBuilder s = new StringBuilder();
    if (m.noMessage()) {
      s.append("trailer ").append(m.status().code());
    } else {
      s.append("message ").append(TestService.ECHO.responseMarshaller().parse(data).getValue());
      if (m.headers() != null && !m.headers().isEmpty()) {
        s.append(" headers ").append(m.headers());
      }
      if (m.status() != null) {
        s.append(" status ").append(m.status().code());
      }
    }
    if (m.trailers() != null && !m.trailers().isEmpty()) {
      s.append(" trailers ").append(m.trailers());
    }
    return s.toString();
  }

  private static String describe(Throwable t) {
    return t instanceof io.millrace.core.StreamErrorException e
        ? "error " + io.millrace.frame.ErrorCode.name(e.errorCode()) + " " + e.getMessage()
        : "error " + t;
  }

  /** A request-response responder's stream that records what is sent on it: next completes it. */
  private static final class RecordingStream implements Stream {
    final List<String> record = new ArrayList<>();

    private void sent(ByteBuf metadata, ByteBuf data) {
      try {
        record.add(describe(metadata, data));
        record.add("complete");
      } finally {
        if (metadata != null) {
          metadata.release();
        }
        data.release();
      }
    }

    @Override
    public void next(ByteBuf metadata, ByteBuf data) {
      sent(metadata, data);
    }

    @Override
    public <T> void next(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
      sent(metadata, encoder.toBuffer(value, ByteBufAllocator.DEFAULT));
    }

    @Override
    public void nextAndComplete(ByteBuf metadata, ByteBuf data) {
      sent(metadata, data);
    }

    @Override
    public void complete() {
      record.add("complete");
    }

    @Override
    public void fail(Throwable cause) {
      record.add(describe(cause));
    }

    @Override
    public void error(int errorCode, String message) {
      record.add("error " + io.millrace.frame.ErrorCode.name(errorCode) + " " + message);
    }

    @Override
    public int streamId() {
      return 1;
    }

    @Override
    public long credit() {
      return 1;
    }

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void request(long n) {}

    @Override
    public void cancel() {}

    @Override
    public Connection connection() {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public boolean isInboundDone() {
      return true;
    }

    @Override
    public boolean isOutboundDone() {
      return !record.isEmpty();
    }
  }
}
