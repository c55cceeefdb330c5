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
    if (UNSAFE_COPY && b.hasMemoryAddress()) {
      // One liveness check (memoryAddress) instead of one per layer of the receive buffer's
      // slice, parent and chunk, which was a third of a stream consumer's time at 8 bytes.
      PlatformDependent.copyMemory(b.memoryAddress() + b.readerIndex(), bytes, 0, n);
    } else {
      b.getBytes(b.readerIndex(), bytes);
    }
    return bytes;
  }
}
