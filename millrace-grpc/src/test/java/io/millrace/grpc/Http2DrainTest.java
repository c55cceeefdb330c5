package io.millrace.grpc;

import static io.millrace.grpc.Http2Drain.ACK;
import static io.millrace.grpc.Http2Drain.CONTINUATION;
import static io.millrace.grpc.Http2Drain.DATA;
import static io.millrace.grpc.Http2Drain.DRAIN_PING;
import static io.millrace.grpc.Http2Drain.END_STREAM;
import static io.millrace.grpc.Http2Drain.GOAWAY;
import static io.millrace.grpc.Http2Drain.HEADERS;
import static io.millrace.grpc.Http2Drain.PING;
import static io.millrace.grpc.Http2Drain.RST_STREAM;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The drain of a spliced HTTP/2 connection, frame by frame on an embedded channel: inbound is what
 * the caller sends grpc-java, outbound what grpc-java sends the caller.
 */
class Http2DrainTest {
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int SETTINGS = 0x4;

  private Http2Drain drain;
  private EmbeddedChannel channel;

  @BeforeEach
  void open() {
    drain = new Http2Drain();
    channel = new EmbeddedChannel(drain);
    fromCaller(PREFACE, frame(SETTINGS, 0, 0, new byte[0]));
    toCaller(frame(SETTINGS, 0, 0, new byte[0]));
    assertThat(readInbound()).isEqualTo(concat(PREFACE, frame(SETTINGS, 0, 0, new byte[0])));
    assertThat(readOutbound()).isEqualTo(frame(SETTINGS, 0, 0, new byte[0]));
  }

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
  }

  @Test
  void untilTheDrain_bytesPassUntouched_theSameBuffers() {
    ByteBuf in = Unpooled.wrappedBuffer(frame(HEADERS, 0x4, 1, new byte[] {1, 2}));
    channel.writeInbound(in);
    assertThat(channel.<ByteBuf>readInbound()).isSameAs(in);
    ByteBuf out = Unpooled.wrappedBuffer(frame(HEADERS, 0x4 | END_STREAM, 1, new byte[] {3}));
    channel.writeOutbound(out);
    assertThat(channel.<ByteBuf>readOutbound()).isSameAs(out);
    in.release();
    out.release();
  }

  @Test
  void withNoCallOpen_goAwayAndPingGoAtOnce_andTheAnswerCloses_withoutReachingGrpcJava() {
    drain.drain();
    assertThat(readOutbound()).isEqualTo(goAwayAndPing());
    assertThat(channel.isOpen()).isTrue();

    fromCaller(ping(ACK, DRAIN_PING));
    channel.runPendingTasks();
    assertThat(readInbound()).isEmpty();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void aCallOpen_keepsTheConnection_untilGrpcJavaEndsIt_andTheTrailersGoOutFirst() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[] {1}), frame(DATA, 0, 1, new byte[] {9, 9}));
    readInbound();
    assertThat(drain.openCalls()).isEqualTo(1);
    drain.drain();
    assertThat(readOutbound()).isEqualTo(goAwayAndPing());
    fromCaller(ping(ACK, DRAIN_PING));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isTrue();

    // The caller half-closes; grpc-java answers with headers, a message and then trailers.
    fromCaller(frame(DATA, END_STREAM, 1, new byte[0]));
    toCaller(frame(HEADERS, 0x4, 1, new byte[] {5}), frame(DATA, 0, 1, new byte[] {6, 6}));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isTrue();
    byte[] trailers = frame(HEADERS, 0x4 | END_STREAM, 1, new byte[] {7});
    toCaller(trailers);
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
    assertThat(readOutbound())
        .isEqualTo(
            concat(
                frame(HEADERS, 0x4, 1, new byte[] {5}),
                frame(DATA, 0, 1, new byte[] {6, 6}),
                trailers));
  }

  @Test
  void aResetFromEitherSide_endsTheCall() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[0]), frame(HEADERS, 0x4, 3, new byte[0]));
    assertThat(drain.openCalls()).isEqualTo(2);
    drain.drain();
    fromCaller(ping(ACK, DRAIN_PING), frame(RST_STREAM, 0, 1, new byte[4]));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isTrue();
    toCaller(frame(RST_STREAM, 0, 3, new byte[4]));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void goAway_waitsForTheEndOfTheFrameGrpcJavaIsWriting() {
    byte[] big = frame(DATA, 0, 1, new byte[100]);
    byte[] next = frame(DATA, 0, 1, new byte[] {1});
    toCaller(slice(big, 0, 40));
    drain.drain();
    assertThat(readOutbound()).isEqualTo(slice(big, 0, 40)); // nothing in the middle of a frame
    toCaller(concat(slice(big, 40, big.length), next));
    assertThat(readOutbound()).isEqualTo(concat(slice(big, 40, big.length), goAwayAndPing(), next));
  }

  @Test
  void goAway_andTheEndOfACall_waitForTheHeaderBlocksLastContinuation() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[0]));
    readInbound();
    byte[] trailersStart = frame(HEADERS, END_STREAM, 1, new byte[] {1}); // no END_HEADERS
    byte[] middle = frame(CONTINUATION, 0, 1, new byte[] {2});
    byte[] last = frame(CONTINUATION, 0x4, 1, new byte[] {3});
    toCaller(trailersStart);
    drain.drain();
    toCaller(middle);
    assertThat(readOutbound()).isEqualTo(concat(trailersStart, middle));
    assertThat(drain.openCalls()).isEqualTo(1);
    toCaller(last);
    assertThat(readOutbound()).isEqualTo(concat(last, goAwayAndPing()));
    assertThat(drain.openCalls()).isZero();
    fromCaller(ping(ACK, DRAIN_PING));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void grpcJavaGoingAwayItself_isLeftToIt_noSecondGoAwayWithAHigherLastStream() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[0]));
    readInbound();
    byte[] grpcGoAway = frame(GOAWAY, 0, 0, new byte[] {0, 0, 0, 1, 0, 0, 0, 0});
    toCaller(grpcGoAway);
    drain.drain();
    toCaller(frame(DATA, 0, 1, new byte[] {1}));
    assertThat(readOutbound()).isEqualTo(concat(grpcGoAway, frame(DATA, 0, 1, new byte[] {1})));
    toCaller(frame(HEADERS, 0x4 | END_STREAM, 1, new byte[0]));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).as("grpc-java closes its connection itself").isTrue();
  }

  @Test
  void goAway_waitsForGrpcJavasFirstFrame() {
    Http2Drain fresh = new Http2Drain();
    EmbeddedChannel other = new EmbeddedChannel(fresh);
    try {
      fresh.drain();
      assertThat(other.<ByteBuf>readOutbound()).isNull();
      ByteBuf settings = Unpooled.wrappedBuffer(frame(SETTINGS, 0, 0, new byte[6]));
      other.writeOutbound(settings);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (ByteBuf b; (b = other.readOutbound()) != null; ) {
        out.writeBytes(bytes(b));
      }
      assertThat(out.toByteArray())
          .isEqualTo(concat(frame(SETTINGS, 0, 0, new byte[6]), goAwayAndPing()));
    } finally {
      other.finishAndReleaseAll();
    }
  }

  @Test
  void theAnswer_isFoundByteByByte_amongOtherFrames_andOnlyItIsKeptFromGrpcJava() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[] {1}));
    readInbound();
    drain.drain();
    readOutbound();
    byte[] others =
        concat(
            frame(DATA, 0, 1, new byte[] {4, 5, 6}),
            ping(ACK, 42), // an answer to grpc-java's own PING
            ping(0, 7), // the caller's own PING
            frame(PING, ACK, 0, new byte[3])); // malformed: grpc-java's to judge
    byte[] later = frame(DATA, END_STREAM, 1, new byte[] {8});
    byte[] all = concat(others, ping(ACK, DRAIN_PING), later);
    for (byte b : all) {
      fromCaller(new byte[] {b});
    }
    assertThat(readInbound()).isEqualTo(concat(others, later));
    assertThat(channel.isOpen()).isTrue();
    toCaller(frame(HEADERS, 0x4 | END_STREAM, 1, new byte[] {7}));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void aCallerThatNeverAnswers_isDrainedAfterTheWait_butItsLateCallsAreCounted() {
    drain.drain();
    readOutbound();
    fromCaller(frame(HEADERS, 0x4, 1, new byte[0]));
    readInbound();
    channel.advanceTimeBy(Http2Drain.PING_WAIT_SECONDS, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isTrue();
    // The answer, late, is still kept from grpc-java (which would warn of a PING it never sent).
    byte[] data = frame(DATA, 0, 1, new byte[] {5});
    fromCaller(data, ping(ACK, DRAIN_PING), data);
    assertThat(readInbound()).isEqualTo(concat(data, data));
    toCaller(frame(HEADERS, 0x4 | END_STREAM, 1, new byte[0]));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void whileTheAnswerIsAwaited_aReadWithoutItGoesOnAsItIs_andOneWithItIsCutAroundIt() {
    fromCaller(frame(HEADERS, 0x4, 1, new byte[0]));
    readInbound();
    drain.drain();
    readOutbound();
    ByteBuf plain =
        Unpooled.wrappedBuffer(
            concat(frame(DATA, 0, 1, new byte[] {1, 2}), ping(ACK, 42), ping(0, 9)));
    channel.writeInbound(plain);
    assertThat(channel.<ByteBuf>readInbound()).as("not copied, not sliced").isSameAs(plain);
    plain.release();
    byte[] before = frame(DATA, 0, 1, new byte[] {3});
    byte[] after = frame(DATA, END_STREAM, 1, new byte[] {4});
    fromCaller(before, ping(ACK, DRAIN_PING), after);
    assertThat(readInbound()).isEqualTo(concat(before, after));
    assertThat(drain.openCalls()).isEqualTo(1);
    toCaller(frame(HEADERS, 0x4 | END_STREAM, 1, new byte[0]));
    channel.runPendingTasks();
    assertThat(channel.isOpen()).isFalse();
  }

  private void fromCaller(byte[]... parts) {
    channel.writeInbound(Unpooled.wrappedBuffer(concat(parts)));
  }

  private void toCaller(byte[]... parts) {
    channel.writeOutbound(Unpooled.wrappedBuffer(concat(parts)));
  }

  private byte[] readInbound() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuf b; (b = channel.readInbound()) != null; ) {
      out.writeBytes(bytes(b));
    }
    return out.toByteArray();
  }

  private byte[] readOutbound() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuf b; (b = channel.readOutbound()) != null; ) {
      out.writeBytes(bytes(b));
    }
    return out.toByteArray();
  }

  private static byte[] bytes(ByteBuf b) {
    byte[] a = new byte[b.readableBytes()];
    b.readBytes(a);
    b.release();
    return a;
  }

  private static byte[] goAwayAndPing() {
    byte[] goAway = new byte[8];
    goAway[0] = 0x7f;
    goAway[1] = goAway[2] = goAway[3] = (byte) 0xff;
    return concat(frame(GOAWAY, 0, 0, goAway), ping(0, DRAIN_PING));
  }

  private static byte[] ping(int flags, long data) {
    ByteBuf b = Unpooled.buffer(8).writeLong(data);
    return frame(PING, flags, 0, bytes(b));
  }

  static byte[] frame(int type, int flags, int stream, byte[] payload) {
    ByteBuf b = Unpooled.buffer();
    b.writeMedium(payload.length).writeByte(type).writeByte(flags).writeInt(stream);
    b.writeBytes(payload);
    return bytes(b);
  }

  private static byte[] slice(byte[] a, int from, int to) {
    return java.util.Arrays.copyOfRange(a, from, to);
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }
}
