package io.millrace.frame;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FrameBatch} writes exactly the bytes of the frame encoders, each behind its length prefix,
 * into heap and direct batches (the direct one through raw stores where the platform allows them).
 */
class FrameBatchTest {
  private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

  /** Payloads the test made: the batch copies them and the caller keeps them, so they go here. */
  private final List<ByteBuf> payloads = new ArrayList<>();

  @AfterEach
  void releasePayloads() {
    for (ByteBuf p : payloads) {
      if (p.refCnt() > 0) {
        p.release();
      }
    }
  }

  private static ByteBuf batch(boolean direct) {
    ByteBuf b = direct ? ALLOC.directBuffer(16, 1 << 16) : ALLOC.heapBuffer(16, 1 << 16);
    b.writeBytes(new byte[] {9, 9, 9, 9, 9}); // frames already in the batch stay as they are
    return b;
  }

  private ByteBuf utf8(String s) {
    if (s == null) {
      return null;
    }
    ByteBuf b = Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    payloads.add(b);
    return b;
  }

  /** The encoder's frame with a 3-byte length prefix, as the batch should hold it. */
  private static byte[] prefixed(ByteBuf frame) {
    try {
      ByteBuf out = Unpooled.buffer();
      out.writeMedium(frame.readableBytes());
      out.writeBytes(frame, frame.readerIndex(), frame.readableBytes());
      return ByteBufUtil.getBytes(out);
    } finally {
      frame.release();
    }
  }

  private record Case(String name, Supplier<ByteBuf> encoded, Consumer<ByteBuf> appended) {}

  private List<Case> cases() {
    List<Case> cases = new ArrayList<>();
    for (String metadata : new String[] {null, "", "meta"}) {
      for (String data : new String[] {null, "", "x", "some longer data for the frame"}) {
        cases.add(
            new Case(
                "fnf " + metadata + "/" + data,
                () -> RequestFnfFrame.encode(ALLOC, 0, 7, false, utf8(metadata), utf8(data)),
                b ->
                    FrameBatch.append(b, 7, FrameType.REQUEST_FNF, 0, utf8(metadata), utf8(data))));
        cases.add(
            new Case(
                "rr " + metadata + "/" + data,
                () ->
                    RequestResponseFrame.encode(
                        ALLOC, 0, Integer.MAX_VALUE, false, utf8(metadata), utf8(data)),
                b ->
                    FrameBatch.append(
                        b,
                        Integer.MAX_VALUE,
                        FrameType.REQUEST_RESPONSE,
                        0,
                        utf8(metadata),
                        utf8(data))));
        cases.add(
            new Case(
                "stream " + metadata + "/" + data,
                () ->
                    RequestStreamFrame.encode(ALLOC, 0, 3, false, 256, utf8(metadata), utf8(data)),
                b ->
                    FrameBatch.appendWithRequestN(
                        b, 3, FrameType.REQUEST_STREAM, 0, 256, utf8(metadata), utf8(data))));
        cases.add(
            new Case(
                "channel, complete " + metadata + "/" + data,
                () ->
                    RequestChannelFrame.encode(
                        ALLOC, 0, 5, false, true, Long.MAX_VALUE, utf8(metadata), utf8(data)),
                b ->
                    FrameBatch.appendWithRequestN(
                        b,
                        5,
                        FrameType.REQUEST_CHANNEL,
                        FrameHeader.FLAG_COMPLETE,
                        RequestNFrame.clamp(Long.MAX_VALUE),
                        utf8(metadata),
                        utf8(data))));
        int flags = FrameHeader.FLAG_NEXT | (data == null ? FrameHeader.FLAG_COMPLETE : 0);
        cases.add(
            new Case(
                "payload " + metadata + "/" + data,
                () -> PayloadFrame.encode(ALLOC, 0, 0x0102_0304, flags, utf8(metadata), utf8(data)),
                b ->
                    FrameBatch.append(
                        b, 0x0102_0304, FrameType.PAYLOAD, flags, utf8(metadata), utf8(data))));
      }
    }
    cases.add(
        new Case(
            "complete",
            () -> PayloadFrame.encodeComplete(ALLOC, 0, 11),
            b ->
                FrameBatch.append(
                    b, 11, FrameType.PAYLOAD, FrameHeader.FLAG_COMPLETE, null, null)));
    cases.add(
        new Case(
            "cancel",
            () -> CancelFrame.encode(ALLOC, 0, 13),
            b -> FrameBatch.append(b, 13, FrameType.CANCEL, 0, null, null)));
    cases.add(
        new Case(
            "request-n",
            () -> RequestNFrame.encode(ALLOC, 0, 15, 1),
            b -> FrameBatch.appendWithRequestN(b, 15, FrameType.REQUEST_N, 0, 1, null, null)));
    return cases;
  }

  @ParameterizedTest(name = "direct batch: {0}")
  @ValueSource(booleans = {false, true})
  void appendedFrames_areTheEncodersBytesBehindTheirPrefix(boolean direct) {
    ByteBuf b = batch(direct);
    try {
      ByteBuf expected = Unpooled.buffer();
      expected.writeBytes(new byte[] {9, 9, 9, 9, 9});
      assertThat(b.hasMemoryAddress()).as("a direct batch has an address here").isEqualTo(direct);
      for (Case c : cases()) {
        c.appended().accept(b);
        expected.writeBytes(prefixed(c.encoded().get()));
        assertThat(ByteBufUtil.getBytes(b)).as(c.name()).isEqualTo(ByteBufUtil.getBytes(expected));
      }
      assertThat(b.capacity()).as("the batch grew as frames went in").isGreaterThan(16);
    } finally {
      b.release();
    }
  }

  @ParameterizedTest(name = "direct batch: {0}")
  @ValueSource(booleans = {false, true})
  void anUnreadablePayload_failsAndLeavesTheBatchAsItWas(boolean direct) {
    ByteBuf b = batch(direct);
    try {
      FrameBatch.append(b, 1, FrameType.REQUEST_FNF, 0, null, utf8("ok"));
      byte[] before = ByteBufUtil.getBytes(b);
      ByteBuf released = utf8("gone");
      released.release();
      assertThatThrownBy(
              () -> FrameBatch.append(b, 3, FrameType.REQUEST_FNF, 0, utf8("m"), released))
          .isInstanceOf(IllegalReferenceCountException.class);
      assertThat(ByteBufUtil.getBytes(b)).isEqualTo(before);
      FrameBatch.append(b, 5, FrameType.REQUEST_FNF, 0, null, utf8("after"));
      assertThat(b.readableBytes()).isEqualTo(before.length + 3 + FrameHeader.SIZE + 5);
    } finally {
      b.release();
    }
  }
}
