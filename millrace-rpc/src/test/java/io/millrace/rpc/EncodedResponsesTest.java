package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.core.PayloadEncoder;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.TakesEncoded;
import io.millrace.testing.SignalRecorder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * A stream's responses and a channel's requests to a sink that takes items as their parts ({@link
 * TakesEncoded}, as the streams layer's sinks do), without a connection: which go as parts, with
 * what metadata, and which still go as payloads.
 */
class EncodedResponsesTest {
  private static final String LONG = "x".repeat(PayloadEncoder.IN_FRAME_MAX_BYTES + 1);

  @Test
  void aStreamsResponses_goAsTheirParts_theFirstWithTheHeaders_aLongOneAsAPayload() {
    ServerContext context = TestService.echoContext();
    context.responseHeaders().put("h", "v");
    context.trailers().put("t", "w");
    AtomicInteger done = new AtomicInteger();
    ResponsePublisher<StringValue> responses =
        streamResponses(
            context, Flux.just(text("a"), text(LONG), text("b")), done::incrementAndGet);
    Recorder recorder = new PartsRecorder(false);
    responses.subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals)
        .containsExactly(
            "parts a headers {h=[v]}",
            "payload " + LONG.length() + " chars",
            "parts b",
            "payload trailer OK {t=[w]}",
            "complete");
    assertThat(done).hasValue(1);
  }

  @Test
  void aCallThatEndedBeforeItWasSubscribed_sendsItsEndOnlyOnceOnSubscribeHasReturned()
      throws Exception {
    // A deadline that passed while the handler's method ran: the call ended before the streams
    // layer subscribed, which asks inside its onSubscribe (rule 1.3: nothing comes back in there).
    ServerContext context =
        new ServerContext(
            TestService.served(TestService.ECHO),
            Headers.EMPTY,
            1, // a microsecond: past by the time the answer is made
            io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE,
            16,
            null,
            null);
    Thread.sleep(1);
    AtomicInteger done = new AtomicInteger();
    ResponsePublisher<StringValue> responses =
        streamResponses(context, Flux.<StringValue>never(), done::incrementAndGet);
    responses.startDeadline(io.netty.util.concurrent.GlobalEventExecutor.INSTANCE);
    java.util.List<String> inOnSubscribe = new java.util.ArrayList<>();
    Recorder recorder =
        new Recorder(false) {
          @Override
          public void onSubscribe(org.reactivestreams.Subscription s) {
            super.onSubscribe(s);
            s.request(10);
            inOnSubscribe.addAll(signals);
          }
        };
    responses.subscribe(recorder);
    assertThat(inOnSubscribe).isEmpty();
    assertThat(recorder.signals).containsExactly("payload trailer DEADLINE_EXCEEDED", "complete");
    assertThat(done).hasValue(1);
  }

  @Test
  void toASubscriberThatTakesNoParts_everyResponseIsAPayload() {
    ResponsePublisher<StringValue> responses =
        streamResponses(TestService.echoContext(), Flux.just(text("a"), text("b")), () -> {});
    Recorder recorder = new Recorder(false);
    responses.subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals).containsExactly("payload a", "payload b", "complete");
  }

  @Test
  void aUnaryCallsResponse_isAPayloadThatEndsTheCall() {
    Recorder recorder = new PartsRecorder(false);
    responses(true, false, TestService.ECHO.responseMarshaller(), Flux.just(text("a")))
        .subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals).containsExactly("payload a", "complete");
  }

  @Test
  void toARoutingCaller_aStreamsResponsesGoAsTheirPartsWithoutMetadata() {
    Recorder recorder = new PartsRecorder(false);
    responses(false, true, TestService.ECHO.responseMarshaller(), Flux.just(text("a"), text("b")))
        .subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals).containsExactly("parts a", "parts b", "complete");
  }

  @Test
  void aResponseWhoseLengthFails_endsTheCall_andCancelsTheHandler() {
    AtomicInteger cancels = new AtomicInteger();
    Recorder recorder = new PartsRecorder(false);
    responses(false, false, failingLength(), okBadOk().doOnCancel(cancels::incrementAndGet))
        .subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals).containsExactly("parts ok", "payload trailer UNKNOWN", "complete");
    assertThat(cancels).hasValue(1);
  }

  @Test
  void aChannelRequestWhoseLengthFails_failsTheCall_andCancelsTheCallersMessages() {
    AtomicInteger cancels = new AtomicInteger();
    PrefixedPublisher<StringValue, Payload> requests =
        PrefixedPublisher.encoding(
            null, okBadOk().doOnCancel(cancels::incrementAndGet), failingLength(), alloc());
    Recorder recorder = new PartsRecorder(true);
    requests.subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals).hasSize(2).startsWith("parts ok");
    assertThat(recorder.signals.get(1)).startsWith("error").contains("UNKNOWN");
    assertThat(cancels).hasValue(1);
  }

  /** "ok", "bad", then "ok" for ever: only a cancel ends it. */
  private static Flux<StringValue> okBadOk() {
    AtomicInteger n = new AtomicInteger();
    return Flux.generate(sink -> sink.next(text(n.getAndIncrement() == 1 ? "bad" : "ok")));
  }

  /** A stream's responses to the echo method, on the default allocator. */
  private static ResponsePublisher<StringValue> streamResponses(
      ServerContext context, Flux<StringValue> source, Runnable whenDone) {
    return new ResponsePublisher<>(
        context,
        TestService.ECHO.responseMarshaller(),
        false,
        false,
        ByteBufAllocator.DEFAULT,
        source,
        whenDone);
  }

  private static ResponsePublisher<StringValue> responses(
      boolean unary,
      boolean routing,
      Marshaller<StringValue> marshaller,
      Flux<StringValue> source) {
    return new ResponsePublisher<>(
        TestService.echoContext(), marshaller, unary, routing, alloc(), source, () -> {});
  }

  /** The echo method's marshaller, whose encoder cannot tell the length of "bad". */
  private static Marshaller<StringValue> failingLength() {
    Marshaller<StringValue> proto = TestService.ECHO.responseMarshaller();
    PayloadEncoder<StringValue> encoder = proto.encoder();
    return new Marshaller<>() {
      @Override
      public ByteBuf serialize(StringValue value, ByteBufAllocator alloc) {
        return proto.serialize(value, alloc);
      }

      @Override
      public StringValue parse(ByteBuf data) {
        return proto.parse(data);
      }

      @Override
      public PayloadEncoder<StringValue> encoder() {
        return new PayloadEncoder<>() {
          @Override
          public int length(StringValue value) {
            if (value.getValue().equals("bad")) {
              throw new IllegalStateException("no length");
            }
            return encoder.length(value);
          }

          @Override
          public void encode(StringValue value, ByteBuf out, int index, int length) {
            encoder.encode(value, out, index, length);
          }
        };
      }
    };
  }

  @Test
  void aChannelsRequests_goAsTheirParts_afterTheCallHeader() {
    PrefixedPublisher<StringValue, Payload> requests =
        PrefixedPublisher.encoding(
            () -> Payload.of(ByteBufAllocator.DEFAULT.buffer().writeByte(1), empty()),
            Flux.just(text("a"), text(LONG), text("b")),
            TestService.ECHO.requestMarshaller(),
            alloc());
    Recorder recorder = new PartsRecorder(true);
    requests.subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals)
        .containsExactly(
            "payload header",
            "parts a",
            "payload " + LONG.length() + " chars",
            "parts b",
            "complete");
  }

  @Test
  void aChannelsRequests_toASubscriberThatTakesNoParts_arePayloads() {
    PrefixedPublisher<StringValue, Payload> requests =
        PrefixedPublisher.encoding(
            null,
            Flux.just(text("a"), text(LONG), text("b")),
            TestService.ECHO.requestMarshaller(),
            alloc());
    Recorder recorder = new Recorder(true);
    requests.subscribe(recorder);
    recorder.subscription.request(10);
    assertThat(recorder.signals)
        .containsExactly(
            "payload a", "payload " + LONG.length() + " chars", "payload b", "complete");
  }

  private static ByteBufAllocator alloc() {
    return ByteBufAllocator.DEFAULT;
  }

  private static ByteBuf empty() {
    return io.netty.buffer.Unpooled.EMPTY_BUFFER;
  }

  private static StringValue text(String s) {
    return StringValue.of(s);
  }

  /** Records signals as the streams layer would take them; releases what it is given. */
  private static class Recorder extends SignalRecorder<Payload> {
    final boolean requests; // a channel's requests: the payload with metadata is the call header

    Recorder(boolean requests) {
      super(0); // the test asks
      this.requests = requests;
    }

    @Override
    public void onNext(Payload p) {
      try {
        if (requests && p.hasMetadata()) {
          signals.add("payload header");
        } else if (p.hasMetadata() && ResponseMetadata.decode(p.metadata(), 8192).noMessage()) {
          signals.add("payload trailer" + metadata(p.metadata()));
        } else {
          String meta = p.hasMetadata() ? metadata(p.metadata()) : "";
          signals.add("payload " + describe(parse(p.data())) + meta);
        }
      } finally {
        p.release();
      }
    }

    <T> void onParts(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
      String meta = metadata == null ? "" : metadata(metadata);
      if (metadata != null) {
        metadata.release();
      }
      ByteBuf data = encoder.toBuffer(value, ByteBufAllocator.DEFAULT);
      try {
        signals.add("parts " + describe(parse(data)) + meta);
      } finally {
        data.release();
      }
    }

    private static String metadata(ByteBuf metadata) {
      ResponseMetadata m = ResponseMetadata.decode(metadata, 8192);
      StringBuilder b = new StringBuilder();
      if (m.status() != null) {
        b.append(' ').append(m.status().code());
      }
      if (m.headers().size() > 0) {
        b.append(" headers ").append(map(m.headers()));
      }
      if (m.trailers().size() > 0) {
        b.append(' ').append(map(m.trailers()));
      }
      return b.toString();
    }

    private static String map(Headers h) {
      StringBuilder b = new StringBuilder("{");
      for (String key : h.keys()) {
        if (b.length() > 1) {
          b.append(", ");
        }
        b.append(key).append('=').append(h.getAll(key));
      }
      return b.append('}').toString();
    }

    private static String parse(ByteBuf data) {
      return TestService.ECHO.responseMarshaller().parse(data).getValue();
    }

    private static String describe(String value) {
      return value.length() > 100 ? value.length() + " chars" : value;
    }
  }

  /** Taking parts too, as the streams layer's sinks do. */
  private static final class PartsRecorder extends Recorder implements TakesEncoded {
    PartsRecorder(boolean requests) {
      super(requests);
    }

    @Override
    public <T> void onNextEncoded(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
      onParts(metadata, value, encoder);
    }
  }
}
