package io.millrace.streams.internal;

import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;

/** Conversions from the engine's borrowed buffers to the streams' payloads. */
public final class Payloads {
  /**
   * Whether Netty copies raw memory with sun.misc.Unsafe (JDK 17; on JDK 24+ without
   * --sun-misc-unsafe-memory-access=allow it has no Unsafe, while buffers still report addresses).
   */
  private static final boolean UNSAFE_COPY = PlatformDependent.hasUnsafe();

  private Payloads() {}

  /**
   * A payload the receiver owns, from buffers the engine lends for the duration of a callback: heap
   * copies, or retained views when {@code zeroCopy}.
   */
  public static Payload received(ByteBuf metadata, ByteBuf data, boolean zeroCopy) {
    if (zeroCopy) {
      return Payload.of(metadata == null ? null : metadata.retainedSlice(), data.retainedSlice());
    }
    return Payload.received(
        metadata == null ? null : Unpooled.wrappedBuffer(heapBytes(metadata)), heapBytes(data));
  }

  private static final byte[] NO_BYTES = new byte[0];

  private static byte[] heapBytes(ByteBuf b) {
    int n = b.readableBytes();
    if (n == 0) {
      return NO_BYTES;
    }
    byte[] bytes = new byte[n];
    copyReadable(b, bytes, 0);
    return bytes;
  }

  /**
   * Copies {@code b}'s readable bytes into {@code dst} at {@code at}, leaving {@code b}'s indexes
   * as they are. With one liveness check (memoryAddress) where {@code getBytes} checks each layer
   * of a received slice, its parent and the chunk: that was a third of a stream consumer's time at
   * 8 bytes, and a quarter of a unary RPC server's.
   */
  public static void copyReadable(ByteBuf b, byte[] dst, int at) {
    if (UNSAFE_COPY && b.hasMemoryAddress()) {
      PlatformDependent.copyMemory(b.memoryAddress() + b.readerIndex(), dst, at, b.readableBytes());
    } else {
      b.getBytes(b.readerIndex(), dst, at, b.readableBytes());
    }
  }

  /**
   * Copies {@code length} bytes of {@code src} from {@code srcIndex} into {@code dst} at {@code
   * index}, leaving {@code dst}'s indexes as they are. Both ranges are checked, and so is the
   * liveness of the memory {@code dst} stands on (a derived buffer's own count is the caller's to
   * keep: the frame writers own theirs); a read-only buffer refuses the write. Into native memory
   * with one raw copy: Netty 4.2's {@code setBytes} from an array goes through a method handle to
   * {@code ByteBuffer.put}, which C2 does not always inline, and in the runs where it did not, that
   * copy of a few bytes took a tenth of a unary RPC caller's time (docs/benchmarks.md).
   */
  public static void copyInto(byte[] src, int srcIndex, ByteBuf dst, int index, int length) {
    if (UNSAFE_COPY && dst.hasMemoryAddress() && !dst.isReadOnly()) {
      if ((srcIndex | index | length) < 0
          || length > src.length - srcIndex
          || length > dst.capacity() - index) {
        throw new IndexOutOfBoundsException(
            "copying "
                + length
                + " bytes from "
                + srcIndex
                + " of "
                + src.length
                + " to "
                + index
                + " of "
                + dst.capacity());
      }
      PlatformDependent.copyMemory(src, srcIndex, dst.memoryAddress() + index, length);
    } else {
      dst.setBytes(index, src, srcIndex, length);
    }
  }
}
