package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The echo semantics against a fake stream: what is sent, and how much inbound is asked for. */
class EchoResponderTest {

  /** Records what the responder does with a stream; credit and writability are set by tests. */
  static final class FakeStream implements Stream {
    final List<String> sent = new ArrayList<>();
    long credit;
    boolean writable = true;
    long requested;
    boolean completed;
    String error;

    @Override
    public int streamId() {
      return 1;
    }

    @Override
    public long credit() {
      return credit;
    }

    @Override
    public boolean isReady() {
      return credit > 0 && writable && !completed;
    }

    @Override
    public void next(ByteBuf metadata, ByteBuf data) {
      assertThat(credit).as("never sends without credit").isPositive();
      credit--;
      sent.add(data.toString(StandardCharsets.UTF_8));
      if (metadata != null) {
        metadata.release();
      }
      data.release();
    }

    @Override
    public void nextAndComplete(ByteBuf metadata, ByteBuf data) {
      next(metadata, data);
      completed = true;
    }

    @Override
    public void complete() {
      completed = true;
    }

    @Override
    public void error(int errorCode, String message) {
      error = message;
    }

    @Override
    public void fail(Throwable cause) {
      error = cause.getMessage();
    }

    @Override
    public void request(long n) {
      requested += n;
    }

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
      return false;
    }

    @Override
    public boolean isOutboundDone() {
      return completed || error != null;
    }
  }

  private static ByteBuf utf8(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
  }

  @Test
  void channel_asksForNoMoreThanItMayEcho() {
    FakeStream stream = new FakeStream();
    stream.credit = 3;
    ByteBuf first = utf8("first");
    StreamListener listener = new EchoResponder().requestChannel(stream, null, first, false);
    first.release();
    assertThat(stream.sent).containsExactly("first");
    assertThat(stream.requested).as("credit 3, one used: asks for 2").isEqualTo(2);
  }

  @Test
  void channel_withoutOutboundCredit_asksForNothingUntilGranted() {
    FakeStream stream = new FakeStream();
    stream.credit = 1;
    ByteBuf first = utf8("first");
    StreamListener listener = new EchoResponder().requestChannel(stream, null, first, false);
    first.release();
    assertThat(stream.requested).isZero();
    stream.credit = 500;
    listener.onReady(stream);
    assertThat(stream.requested).isEqualTo(EchoResponder.CHANNEL_WINDOW);
  }

  @Test
  void channel_pendingBytesCapped_whenPeerDoesNotRead() {
    FakeStream stream = new FakeStream();
    stream.credit = Long.MAX_VALUE;
    ByteBuf first = utf8("first");
    StreamListener listener = new EchoResponder().requestChannel(stream, null, first, false);
    first.release();
    stream.writable = false;
    long requestedBefore = stream.requested;
    ByteBuf big = Unpooled.wrappedBuffer(new byte[256 * 1024]);
    for (int i = 0; i < 4; i++) {
      listener.onNext(stream, null, big);
    }
    assertThat(stream.requested).as("stopped asking at 1 MiB pending").isEqualTo(requestedBefore);
    big.release();
    listener.onCancel(stream); // releases what is pending
  }

  @Test
  void channel_completesAfterDrainingWhenRequesterCompletes() {
    FakeStream stream = new FakeStream();
    stream.credit = 10;
    ByteBuf first = utf8("a");
    StreamListener listener = new EchoResponder().requestChannel(stream, null, first, false);
    first.release();
    stream.writable = false;
    ByteBuf b = utf8("b");
    listener.onNext(stream, null, b);
    b.release();
    listener.onComplete(stream);
    assertThat(stream.completed).isFalse();
    stream.writable = true;
    listener.onReady(stream);
    assertThat(stream.sent).containsExactly("a", "b");
    assertThat(stream.completed).isTrue();
  }

  @Test
  void stream_nonNumericData_errorQuotesAtMost64Bytes() {
    FakeStream stream = new FakeStream();
    ByteBuf data = utf8("z".repeat(10_000));
    new EchoResponder().requestStream(stream, null, data);
    data.release();
    assertThat(stream.error).hasSizeLessThan(150).contains("z".repeat(64) + "...");
  }

  @Test
  void stream_zeroItems_completesAtOnce() {
    FakeStream stream = new FakeStream();
    stream.credit = 5;
    ByteBuf data = utf8("0");
    StreamListener listener = new EchoResponder().requestStream(stream, null, data);
    data.release();
    listener.onReady(stream);
    assertThat(stream.sent).isEmpty();
    assertThat(stream.completed).isTrue();
  }
}
