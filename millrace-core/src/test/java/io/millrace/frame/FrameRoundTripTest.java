package io.millrace.frame;

import static io.millrace.frame.FrameCases.hex;
import static io.millrace.frame.FrameCases.pattern;
import static io.millrace.frame.FrameHeader.FLAG_METADATA;
import static io.millrace.frame.FrameHeader.FLAG_NEXT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.frame.FrameCases.FrameCase;
import io.millrace.testing.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every frame type encoded by Millrace and decoded by {@link FrameReader}, field by field. */
class FrameRoundTripTest {
  private static final int HEADROOM = FrameHeader.LENGTH_PREFIX_SIZE;

  private final TrackingAllocator alloc = new TrackingAllocator();

  static List<FrameCase> cases() {
    return FrameCases.all();
  }

  @AfterEach
  void everyBufferReleased() {
    alloc.assertAllReleased();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void encode_noHeadroom_decodesToEveryField(FrameCase c) {
    FrameCases.Inputs in = new FrameCases.Inputs(alloc);
    ByteBuf frame = c.encoder().encode(in, 0);
    try {
      assertThat(RecordingListener.decode(frame)).isEqualTo(c.expected());
    } finally {
      frame.release();
    }
    in.assertStillOwnedThenRelease();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void encode_withHeadroom_reservesBytesThenWritesSameFrame(FrameCase c) {
    ByteBuf plain = FrameCases.encode(c, alloc, 0);
    ByteBuf withHeadroom = FrameCases.encode(c, alloc, HEADROOM);
    try {
      assertThat(withHeadroom.readerIndex()).isZero();
      assertThat(withHeadroom.readableBytes()).isEqualTo(HEADROOM + plain.readableBytes());
      ByteBuf frame = withHeadroom.slice(HEADROOM, plain.readableBytes());
      assertThat(ByteBufUtil.hexDump(frame)).isEqualTo(ByteBufUtil.hexDump(plain));

      // The transport writes its length prefix into the reserved bytes; the frame is untouched.
      withHeadroom.setMedium(0, plain.readableBytes());
      assertThat(withHeadroom.getUnsignedMedium(0)).isEqualTo(plain.readableBytes());
      withHeadroom.skipBytes(HEADROOM);
      assertThat(RecordingListener.decode(withHeadroom)).isEqualTo(c.expected());
    } finally {
      plain.release();
      withHeadroom.release();
    }
  }

  @Test
  void encode_dataAboveZeroCopyThreshold_sharesCallerBufferAndLeavesItOwnedByCaller() {
    ByteBuf metadata = alloc.copyOf(FrameCases.utf8("meta"));
    ByteBuf data = alloc.copyOf(pattern(Frames.ZERO_COPY_THRESHOLD + 1));
    data.readerIndex(1); // only the readable part is sent
    ByteBuf frame = PayloadFrame.encode(alloc, HEADROOM, 11, FLAG_NEXT, metadata, data);
    try {
      assertThat(frame).isInstanceOf(CompositeByteBuf.class);
      assertThat(data.refCnt()).as("frame holds a retained slice").isEqualTo(2);
      assertThat(metadata.refCnt()).as("small metadata is copied").isEqualTo(1);
      assertThat(data.readerIndex()).as("caller's indexes untouched").isEqualTo(1);
      frame.skipBytes(HEADROOM);
      assertThat(RecordingListener.decode(frame))
          .isEqualTo(
              new Decoded.Payload(
                  11,
                  FLAG_NEXT | FLAG_METADATA,
                  hex("meta"),
                  ByteBufUtil.hexDump(data, 1, Frames.ZERO_COPY_THRESHOLD)));
    } finally {
      frame.release();
    }
    assertThat(data.refCnt()).as("caller's refCnt after the frame is released").isEqualTo(1);
    assertThat(metadata.refCnt()).isEqualTo(1);
    data.release();
    metadata.release();
  }

  @Test
  void encode_dataBelowZeroCopyThreshold_copiesIntoOneBuffer() {
    ByteBuf data = alloc.copyOf(pattern(Frames.ZERO_COPY_THRESHOLD - 1));
    ByteBuf frame = RequestResponseFrame.encode(alloc, 0, 1, false, null, data);
    try {
      assertThat(frame).isNotInstanceOf(CompositeByteBuf.class);
      assertThat(data.refCnt()).isEqualTo(1);
      assertThat(RecordingListener.decode(frame))
          .isEqualTo(
              new Decoded.Request(
                  FrameType.REQUEST_RESPONSE, 1, 0, 0, null, ByteBufUtil.hexDump(data)));
    } finally {
      frame.release();
    }
    assertThat(data.refCnt()).isEqualTo(1);
    data.release();
  }

  @Test
  void encode_nonPositiveRequestN_throwsWithoutAllocating() {
    assertThatThrownBy(() -> RequestNFrame.encode(alloc, 0, 1, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RequestStreamFrame.encode(alloc, 0, 1, false, -1, null, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RequestChannelFrame.encode(alloc, 0, 1, false, false, 0, null, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(alloc.allocatedCount()).as("buffers allocated before the check").isZero();
  }

  @Test
  void encode_header_writesStreamTypeAndFlagsAtHeaderOffsets() {
    ByteBuf frame = RequestChannelFrame.encode(alloc, 0, 0x1234_5678, true, true, 5, null, null);
    try {
      assertThat(ByteBufUtil.hexDump(frame)).isEqualTo("12345678" + "1cc0" + "00000005");
      assertThat(FrameHeader.streamId(frame)).isEqualTo(0x1234_5678);
      assertThat(FrameHeader.type(frame)).isEqualTo(FrameType.REQUEST_CHANNEL);
      assertThat(FrameHeader.flags(frame))
          .isEqualTo(FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_COMPLETE);
    } finally {
      frame.release();
    }
  }
}
