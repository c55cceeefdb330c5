package io.millrace.frame;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
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

  /** A source buffer of each kind the application may hand over, holding {@code bytes}. */
  private List<Case> sources(byte[] bytes) {
    List<Case> kinds = new ArrayList<>();
    kinds.add(new Case("heap", () -> keep(Unpooled.wrappedBuffer(bytes)), null));
    kinds.add(
        new Case(
            "heap, read from an offset",
            () -> {
              ByteBuf b = keep(Unpooled.buffer());
              b.writeBytes(new byte[] {1, 2, 3}).writeBytes(bytes).writeByte(4);
              return b.slice(3, bytes.length);
            },
            null));
    kinds.add(
        new Case(
            "unpooled direct",
            () -> keep(Unpooled.directBuffer(bytes.length + 1).writeBytes(bytes)),
            null));
    kinds.add(
        new Case(
            "pooled direct, read from an offset",
            () -> {
              ByteBuf b = keep(ALLOC.directBuffer()).writeByte(7).writeBytes(bytes);
              b.skipBytes(1);
              return b;
            },
            null));
    kinds.add(
        new Case(
            "pooled retained slice",
            () -> {
              ByteBuf parent =
                  PooledByteBufAllocator.DEFAULT
                      .directBuffer()
                      .writeBytes(new byte[] {5, 5})
                      .writeBytes(bytes);
              ByteBuf slice = keep(parent.retainedSlice(2, bytes.length));
              parent.release();
              return slice;
            },
            null));
    kinds.add(
        new Case(
            "composite",
            () -> {
              int half = bytes.length / 2;
              return keep(
                  Unpooled.wrappedBuffer(
                      Unpooled.wrappedBuffer(bytes, 0, half),
                      Unpooled.directBuffer().writeBytes(bytes, half, bytes.length - half)));
            },
            null));
    kinds.add(
        new Case(
            "unreleasable direct",
            () ->
                Unpooled.unreleasableBuffer(
                    keep(Unpooled.directBuffer(bytes.length + 1).writeBytes(bytes))),
            null));
    kinds.add(new Case("read-only", () -> keep(Unpooled.wrappedBuffer(bytes)).asReadOnly(), null));
    return kinds;
  }

  private ByteBuf keep(ByteBuf b) {
    payloads.add(b);
    return b;
  }

  @ParameterizedTest(name = "direct batch: {0}")
  @ValueSource(booleans = {false, true})
  void everyKindOfSourceBuffer_isCopiedFromItsReadableBytes(boolean direct) {
    for (int size : new int[] {0, 1, 7, 8, 13, 32, 33, 100}) {
      byte[] bytes = new byte[size];
      for (int i = 0; i < size; i++) {
        bytes[i] = (byte) (31 * i + size);
      }
      for (Case kind : sources(bytes)) {
        ByteBuf b = batch(direct);
        try {
          int before = b.readableBytes();
          ByteBuf metadata = kind.encoded().get();
          ByteBuf data = kind.encoded().get();
          FrameBatch.append(b, 9, FrameType.PAYLOAD, FrameHeader.FLAG_NEXT, metadata, data);
          byte[] expected =
              prefixed(
                  PayloadFrame.encode(
                      ALLOC,
                      0,
                      9,
                      FrameHeader.FLAG_NEXT,
                      Unpooled.wrappedBuffer(bytes),
                      Unpooled.wrappedBuffer(bytes)));
          assertThat(ByteBufUtil.getBytes(b, before, b.readableBytes() - before))
              .as("%s, %d bytes", kind.name(), size)
              .isEqualTo(expected);
          assertThat(metadata.readableBytes()).as("the source is not read from").isEqualTo(size);
          assertThat(data.readableBytes()).as("the source is not read from").isEqualTo(size);
        } finally {
          b.release();
        }
      }
    }
  }

  @ParameterizedTest(name = "direct batch: {0}")
  @ValueSource(booleans = {false, true})
  void aReleasedSliceOfALiveBuffer_failsAndLeavesTheBatchAsItWas(boolean direct) {
    // The pooled allocator's retained slice counts its own references (the adaptive allocator's
    // shares its parent's): released, it is gone while its parent's memory still reads.
    ByteBuf parent =
        keep(
            PooledByteBufAllocator.DEFAULT
                .directBuffer()
                .writeBytes(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
    ByteBuf slice = parent.retainedSlice(0, 8);
    slice.release();
    assertThat(parent.refCnt()).isEqualTo(1);
    ByteBuf b = batch(direct);
    try {
      byte[] before = ByteBufUtil.getBytes(b);
      assertThatThrownBy(
              () -> FrameBatch.append(b, 3, FrameType.PAYLOAD, FrameHeader.FLAG_NEXT, null, slice))
          .isInstanceOf(IllegalReferenceCountException.class);
      assertThat(ByteBufUtil.getBytes(b)).isEqualTo(before);
    } finally {
      b.release();
    }
  }

  @ParameterizedTest(name = "direct batch: {0}")
  @ValueSource(booleans = {false, true})
  void aReleasedCompositeOfALiveBuffer_failsAndLeavesTheBatchAsItWas(boolean direct) {
    // A one-component composite answers hasMemoryAddress and memoryAddress from its component,
    // whose count its own release does not touch when the component is held elsewhere too.
    ByteBuf component = keep(Unpooled.directBuffer(8).writeLong(0x0102_0304_0506_0708L));
    CompositeByteBuf composite = Unpooled.compositeBuffer().addComponent(true, component.retain());
    composite.release();
    assertThat(component.refCnt()).isEqualTo(1);
    ByteBuf b = batch(direct);
    try {
      byte[] before = ByteBufUtil.getBytes(b);
      assertThatThrownBy(
              () ->
                  FrameBatch.append(
                      b, 3, FrameType.PAYLOAD, FrameHeader.FLAG_NEXT, null, composite))
          .isInstanceOf(IllegalReferenceCountException.class);
      assertThat(ByteBufUtil.getBytes(b)).isEqualTo(before);
    } finally {
      b.release();
    }
  }
}
