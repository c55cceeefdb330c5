package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
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
}
