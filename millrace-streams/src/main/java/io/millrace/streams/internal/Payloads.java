package io.millrace.streams.internal;

import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** Conversions from the engine's borrowed buffers to the streams' payloads. */
public final class Payloads {
  private Payloads() {}

  /**
   * A payload the receiver owns, from buffers the engine lends for the duration of a callback: heap
   * copies, or retained views when {@code zeroCopy}.
   */
  public static Payload received(ByteBuf metadata, ByteBuf data, boolean zeroCopy) {
    if (zeroCopy) {
      return Payload.of(metadata == null ? null : metadata.retainedSlice(), data.retainedSlice());
    }
    return Payload.of(metadata == null ? null : heapCopy(metadata), heapCopy(data));
  }

  private static ByteBuf heapCopy(ByteBuf b) {
    int n = b.readableBytes();
    if (n == 0) {
      return Unpooled.EMPTY_BUFFER;
    }
    byte[] bytes = new byte[n];
    b.getBytes(b.readerIndex(), bytes);
    return Unpooled.wrappedBuffer(bytes);
  }
}
