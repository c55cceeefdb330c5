package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.SetupException;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.millrace.frame.ResumeFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConnectionSetupTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private ScriptedTransport server(Acceptor acceptor) {
    return ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, acceptor);
  }

  private static void assertClosedWith(ScriptedTransport t, int code) {
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).type).isEqualTo(FrameType.ERROR);
    assertThat(frames.get(0).streamId).isZero();
    assertThat(frames.get(0).errorCode).isEqualTo(code);
    assertThat(t.closed).isTrue();
  }

  @Test
  void setup_accepted_acceptorSeesMimeTypesAndRequestsFlow() {
    AtomicReference<String> mimes = new AtomicReference<>();
    ScriptedTransport t =
        server(
            (setup, connection) -> {
              mimes.set(setup.metadataMimeType() + " " + setup.dataMimeType());
              return new Responder() {
                @Override
                public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                  stream.next(null, d.retainedSlice());
                  return null;
                }
              };
            });
    t.inject(Frames.setup(), Frames.requestResponse(1, null, "hi"));
    List<WireFrame> frames = t.take();
    assertThat(mimes.get()).isEqualTo("text/plain text/plain");
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).type).isEqualTo(FrameType.PAYLOAD);
    assertThat(frames.get(0).data).isEqualTo("hi");
    assertThat(t.closed).isFalse();
  }

  @Test
  void firstFrame_notSetup_invalidSetupAndClose() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.requestResponse(1, null, "x"));
    assertClosedWith(t, ErrorCode.INVALID_SETUP);
  }

  @Test
  void setup_neverSent_connectionClosedAfterSetupTimeout() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().setupTimeout(Duration.ofMillis(100)).build(),
            (s, c) -> Responder.REJECT_ALL);
    t.advance(Duration.ofMillis(99));
    assertThat(t.closed).isFalse();
    t.advance(Duration.ofMillis(2));
    assertClosedWith(t, ErrorCode.INVALID_SETUP);
  }

  @Test
  void setup_unsupportedVersion_unsupportedSetup() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    ByteBuf setup = Frames.setup();
    setup.setShort(setup.readerIndex() + 6, 2);
    t.inject(setup);
    assertClosedWith(t, ErrorCode.UNSUPPORTED_SETUP);
  }

  @Test
  void setup_withResumeToken_unsupportedSetup() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    ByteBuf token = Unpooled.wrappedBuffer(new byte[] {1, 2, 3});
    ByteBuf setup =
        SetupFrame.encode(Frames.ALLOC, 0, false, 1000, 5000, token, "a", "b", null, null);
    t.inject(setup);
    assertClosedWith(t, ErrorCode.UNSUPPORTED_SETUP);
  }

  @Test
  void setup_leaseWithoutIssuer_unsupportedSetup() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.setup(true));
    assertClosedWith(t, ErrorCode.UNSUPPORTED_SETUP);
  }

  @Test
  void setup_zeroKeepAlive_invalidSetup() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    ByteBuf setup = SetupFrame.encode(Frames.ALLOC, 0, false, 0, 5000, null, "a", "b", null, null);
    t.inject(setup);
    assertClosedWith(t, ErrorCode.INVALID_SETUP);
  }

  @Test
  void setup_acceptorThrowsSetupException_sendsItsCode() {
    ScriptedTransport t =
        server(
            (s, c) -> {
              throw new SetupException(ErrorCode.REJECTED_SETUP, "go away");
            });
    t.inject(Frames.setup());
    List<WireFrame> frames = t.take();
    assertThat(frames.get(0).errorCode).isEqualTo(ErrorCode.REJECTED_SETUP);
    assertThat(frames.get(0).message).isEqualTo("go away");
    assertThat(t.closed).isTrue();
  }

  @Test
  void setup_acceptorReturnsNull_rejectedSetup() {
    ScriptedTransport t = server((s, c) -> null);
    t.inject(Frames.setup());
    assertClosedWith(t, ErrorCode.REJECTED_SETUP);
  }

  @Test
  void resume_notSupported_rejectedResume() {
    ScriptedTransport t = server((s, c) -> Responder.REJECT_ALL);
    ByteBuf token = Unpooled.wrappedBuffer(new byte[] {9});
    t.inject(ResumeFrame.encode(Frames.ALLOC, 0, token, 0, 0));
    assertClosedWith(t, ErrorCode.REJECTED_RESUME);
  }

  @Test
  void setup_secondSetup_ignored() {
    AtomicInteger accepted = new AtomicInteger();
    ScriptedTransport t =
        server(
            (s, c) -> {
              accepted.incrementAndGet();
              return Responder.REJECT_ALL;
            });
    t.inject(Frames.setup());
    t.inject(Frames.setup(true));
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
    assertThat(accepted).hasValue(1);
  }

  @Test
  void client_start_sendsSetupWithConfiguredValues() {
    ScriptedTransport t =
        ScriptedTransport.client(
            loop,
            ConnectionConfig.builder()
                .mimeTypes("application/json", "text/plain")
                .keepAlive(Duration.ofSeconds(7), Duration.ofSeconds(30))
                .build(),
            null);
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).type).isEqualTo(FrameType.SETUP);
    assertThat(frames.get(0).n).isEqualTo(7000);
    assertThat(t.engine.metadataMimeType()).isEqualTo("application/json");
  }

  @Test
  void client_serverRejectsSetup_openStreamsFailWithTheSetupError() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("x"), listener));
    t.inject(Frames.error(0, ErrorCode.REJECTED_SETUP, "no thanks"));
    loop.drain();
    assertThat(listener.events).containsExactly("error 0x3: no thanks");
    assertThat(t.closed).isTrue();
  }
}
