package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.ExtFrame;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.MetadataPushFrame;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.ResumeFrame;
import io.millrace.frame.ResumeOkFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The spec's "Handling the Unexpected": frames that MUST be ignored are ignored, and where Millrace
 * is stricter it answers on the stream concerned rather than closing the connection.
 */
class UnexpectedFramesTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private final AtomicInteger metadataPushes = new AtomicInteger();
  private final RecordingListener streamListener = new RecordingListener();

  private ScriptedTransport server() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public void metadataPush(Connection connection, ByteBuf metadata) {
                    metadataPushes.incrementAndGet();
                  }

                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    return streamListener;
                  }

                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    stream.next(null, d.retainedSlice());
                    return null;
                  }
                });
    t.inject(Frames.setup());
    return t;
  }

  /** The connection still works: a request-response is answered. */
  private static void assertStillServing(ScriptedTransport t, int streamId) {
    t.inject(Frames.requestResponse(streamId, null, "ping"));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.type).containsExactly(FrameType.PAYLOAD);
    assertThat(frames.get(0).data).isEqualTo("ping");
    assertThat(t.closed).isFalse();
  }

  @Test
  void cancelAndPayloadAndRequestNOnStreamZero_ignored() {
    ScriptedTransport t = server();
    t.inject(
        Frames.cancel(0),
        Frames.next(0, "stray"),
        Frames.complete(0),
        Frames.requestN(0, 5),
        Frames.requestResponse(0, null, "on stream 0"));
    assertThat(t.take()).isEmpty();
    assertStillServing(t, 1);
  }

  @Test
  void metadataPushOnNonZeroStream_ignored() {
    ScriptedTransport t = server();
    ByteBuf metadata = Frames.utf8("m");
    ByteBuf frame = MetadataPushFrame.encode(Frames.ALLOC, 0, metadata);
    frame.setInt(0, 5); // stream id 5
    ByteBuf valid = MetadataPushFrame.encode(Frames.ALLOC, 0, metadata);
    metadata.release();
    t.inject(frame, valid);
    assertThat(metadataPushes).hasValue(1);
    assertStillServing(t, 1);
  }

  @Test
  void ignorableExt_ignoredOnAnyStream() {
    ScriptedTransport t = server();
    t.inject(Frames.requestStream(1, 5, "q"));
    t.inject(ext(0, true), ext(1, true), ext(7, true));
    assertThat(t.take()).isEmpty();
    assertThat(streamListener.events).containsExactly("ready");
    assertStillServing(t, 3);
  }

  @Test
  void nonIgnorableExtOnLiveStream_thatStreamGetsInvalid_connectionLives() {
    ScriptedTransport t = server();
    t.inject(Frames.requestStream(1, 5, "q"));
    t.inject(ext(1, false));
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type, f -> f.streamId, f -> f.errorCode)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(FrameType.ERROR, 1, ErrorCode.INVALID));
    assertThat(frames.get(0).message).contains("extension");
    assertThat(streamListener.events)
        .containsExactly("ready", "error 0x204: " + frames.get(0).message);
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    assertStillServing(t, 3);
  }

  @Test
  void nonIgnorableExtOnUnknownStream_ignored() {
    ScriptedTransport t = server();
    t.inject(ext(9, false));
    assertThat(t.take()).isEmpty();
    assertStillServing(t, 1);
  }

  @Test
  void nonIgnorableExtOnStreamZero_connectionError() {
    ScriptedTransport t = server();
    t.inject(ext(0, false));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void unknownFrameTypeWithoutIgnoreOnLiveStream_thatStreamGetsInvalid() {
    ScriptedTransport t = server();
    t.inject(Frames.requestStream(1, 5, "q"));
    ByteBuf unknown = Frames.ALLOC.buffer().writeInt(1).writeShort(0x20 << 10);
    t.inject(unknown);
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.INVALID);
    assertStillServing(t, 3);
  }

  @Test
  void setupErrorCodesOnStreamZero_ignoredByServer() {
    ScriptedTransport t = server();
    t.inject(
        Frames.error(0, ErrorCode.INVALID_SETUP, "x"),
        Frames.error(0, ErrorCode.UNSUPPORTED_SETUP, "x"),
        Frames.error(0, ErrorCode.REJECTED_SETUP, "x"),
        Frames.error(0, ErrorCode.REJECTED_RESUME, "x"));
    assertThat(t.take()).isEmpty();
    assertStillServing(t, 1);
  }

  @Test
  void setupErrorOnStreamZero_ignoredByClientOnceServerHasSpoken() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("x"), listener));
    t.inject(Frames.keepAlive(false, ""));
    t.inject(Frames.error(0, ErrorCode.REJECTED_SETUP, "late"));
    assertThat(t.closed).isFalse();
    t.inject(Frames.payload(1, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE, null, "ok"));
    assertThat(listener.events).containsExactly("next ok", "complete");
  }

  @Test
  void setupOnClient_ignored() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    t.inject(Frames.setup());
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
  }

  @Test
  void resumeAfterSetup_connectionError() {
    ScriptedTransport t = server();
    t.inject(ResumeFrame.encode(Frames.ALLOC, 0, Unpooled.wrappedBuffer(new byte[] {1}), 0, 0));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void unsolicitedResumeOk_ignored() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    t.inject(ResumeOkFrame.encode(Frames.ALLOC, 0, 42));
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
  }

  @Test
  void payloadWithBothFollowsAndComplete_followsIgnored() {
    ScriptedTransport t = server();
    t.inject(Frames.requestStream(1, 5, "q"));
    ByteBuf d = Frames.utf8("last");
    ByteBuf frame =
        PayloadFrame.encode(
            Frames.ALLOC, 0, 1, FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_COMPLETE, null, d);
    d.release();
    t.inject(frame);
    assertThat(t.closed).isFalse();
  }

  private static ByteBuf ext(int streamId, boolean ignorable) {
    ByteBuf data = Frames.utf8("ext");
    ByteBuf frame = ExtFrame.encode(Frames.ALLOC, 0, streamId, ignorable, 0x1234, null, data);
    data.release();
    return frame;
  }
}
