package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.internal.LentFrame;
import io.millrace.frame.LentFrameBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The raw copies between arrays and buffers: the bytes, the indexes left alone, the bounds. */
class PayloadsTest {
  private static final byte[] SOURCE = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

  /** Native (with a memory address: the raw copy) and heap (Netty's setBytes) buffers. */
  private static List<ByteBuf> targets() {
    return List.of(
        ByteBufAllocator.DEFAULT.directBuffer(16, 16),
        PooledByteBufAllocator.DEFAULT.directBuffer(16, 16),
        Unpooled.buffer(16, 16));
  }

  @Test
  void copyInto_writesTheRangeAtTheIndex_andLeavesTheIndexesAlone() {
    for (ByteBuf dst : targets()) {
      try {
        dst.writerIndex(3);
        Payloads.copyInto(SOURCE, 2, dst, 5, 4);
        assertThat(dst.readerIndex()).isZero();
        assertThat(dst.writerIndex()).isEqualTo(3);
        byte[] got = new byte[4];
        dst.getBytes(5, got);
        assertThat(got).containsExactly(3, 4, 5, 6);
        Payloads.copyInto(SOURCE, 0, dst, 0, 0); // nothing to copy: allowed at any valid index
        Payloads.copyInto(SOURCE, 0, dst, 6, 10); // up to the last byte of the buffer
        assertThat(dst.getByte(15)).isEqualTo((byte) 10);
      } finally {
        dst.release();
      }
    }
  }

  @Test
  void copyInto_beyondEitherEnd_throws_andWritesNothing() {
    for (ByteBuf dst : targets()) {
      try {
        dst.setZero(0, 16);
        assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 0, dst, 7, 10))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 4, dst, 0, 7))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Payloads.copyInto(SOURCE, -1, dst, 0, 2))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 0, dst, -1, 2))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 0, dst, 0, -1))
            .isInstanceOf(IndexOutOfBoundsException.class);
        for (int i = 0; i < 16; i++) {
          assertThat(dst.getByte(i)).as("byte %d", i).isZero();
        }
      } finally {
        dst.release();
      }
    }
  }

  @Test
  void copyInto_aReadOnlyView_refusesTheWrite() {
    ByteBuf dst = ByteBufAllocator.DEFAULT.directBuffer(16, 16);
    try {
      dst.setZero(0, 16);
      assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 0, dst.asReadOnly(), 0, 4))
          .isInstanceOf(java.nio.ReadOnlyBufferException.class);
      assertThat(dst.getByte(0)).isZero();
    } finally {
      dst.release();
    }
  }

  @Test
  void copyInto_aReleasedBuffer_throws() {
    ByteBuf dst = ByteBufAllocator.DEFAULT.directBuffer(16, 16);
    dst.release();
    assertThatThrownBy(() -> Payloads.copyInto(SOURCE, 0, dst, 0, 4))
        .isInstanceOf(io.netty.util.IllegalReferenceCountException.class);
  }

  /** Every length from 0 to 70 at odd offsets: the word loop, its tail, and the stub beyond. */
  @Test
  void copiesOfEveryLength_bothWays_moveExactlyTheirBytes() {
    byte[] pattern = new byte[80];
    for (int i = 0; i < pattern.length; i++) {
      pattern[i] = (byte) (i * 7 + 3);
    }
    for (ByteBuf buffer : targets128()) {
      try {
        for (int length = 0; length <= 70; length++) {
          buffer.setZero(0, buffer.capacity());
          Payloads.copyInto(pattern, 5, buffer, 3, length);
          for (int i = 0; i < buffer.capacity(); i++) {
            byte expected = i >= 3 && i < 3 + length ? pattern[5 + i - 3] : 0;
            assertThat(buffer.getByte(i)).as("length %d, byte %d", length, i).isEqualTo(expected);
          }
          buffer.setIndex(3, 3 + length);
          byte[] out = new byte[90];
          Payloads.copyReadable(buffer, out, 11);
          for (int i = 0; i < out.length; i++) {
            byte expected = i >= 11 && i < 11 + length ? pattern[5 + i - 11] : 0;
            assertThat(out[i]).as("length %d, byte %d", length, i).isEqualTo(expected);
          }
          assertThat(buffer.readerIndex()).isEqualTo(3);
          assertThat(buffer.writerIndex()).isEqualTo(3 + length);
          buffer.clear();
        }
      } finally {
        buffer.release();
      }
    }
  }

  @Test
  void copyReadable_intoTooSmallAnArray_throws_andWritesNothing() {
    for (ByteBuf src : targets128()) {
      try {
        src.writeBytes(SOURCE);
        byte[] small = new byte[12];
        assertThatThrownBy(() -> Payloads.copyReadable(src, small, 3))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Payloads.copyReadable(src, small, -1))
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(small).containsOnly(0);
        Payloads.copyReadable(src, small, 2); // exactly to the end
        assertThat(small[11]).isEqualTo((byte) 10);
      } finally {
        src.release();
      }
    }
  }

  @Test
  void copyReadable_ofALentFrameAndItsMetadata_readsThroughTheLentAddress() {
    for (ByteBuf receive : targets128()) {
      try {
        byte[] bytes = new byte[40];
        for (int i = 0; i < bytes.length; i++) {
          bytes[i] = (byte) (i * 7 + 1);
        }
        receive.writeBytes(bytes); // the receive buffer: a frame's metadata and data inside it
        LentFrame frame = new LentFrame(receive);
        assertThat(frame.lentAddress()).as("not taken yet").isZero();
        frame.takeAddress();
        assertThat(frame.lentAddress())
            .isEqualTo(receive.hasMemoryAddress() ? receive.memoryAddress() : 0);
        receive.setIndex(20, 29);
        ByteBuf metadata = frame.lendSlice(7, 5);
        assertThat(((LentFrameBuffer) metadata).lentAddress()).isEqualTo(frame.lentAddress());
        byte[] data = new byte[9];
        byte[] meta = new byte[5];
        Payloads.copyReadable(frame, data, 0);
        Payloads.copyReadable(metadata, meta, 0);
        assertThat(data).isEqualTo(Arrays.copyOfRange(bytes, 20, 29));
        assertThat(meta).isEqualTo(Arrays.copyOfRange(bytes, 7, 12));
        frame.dropAddress(); // the batch of frames ended: a late read goes the checked way
        assertThat(frame.lentAddress()).isZero();
        assertThat(((LentFrameBuffer) metadata).lentAddress()).isZero();
        Payloads.copyReadable(frame, data, 0);
        assertThat(data).isEqualTo(Arrays.copyOfRange(bytes, 20, 29));
      } finally {
        receive.release();
      }
    }
  }

  private static List<ByteBuf> targets128() {
    return List.of(
        ByteBufAllocator.DEFAULT.directBuffer(128, 128),
        PooledByteBufAllocator.DEFAULT.directBuffer(128, 128),
        Unpooled.buffer(128, 128));
  }
}
