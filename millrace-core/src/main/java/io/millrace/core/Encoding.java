package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * What the interfaces' defaults share when a value that could be encoded into the frame goes into a
 * buffer of its own instead.
 */
final class Encoding {
  private Encoding() {}

  /**
   * {@code value} in a new buffer from {@code alloc}; when it fails to encode, {@code metadata}
   * (which the caller handed over with it) is released and the encoder's exception thrown.
   */
  static <T> ByteBuf toBufferOrRelease(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, ByteBufAllocator alloc) {
    try {
      return encoder.toBuffer(value, alloc);
    } catch (Throwable e) {
      if (metadata != null) {
        metadata.release();
      }
      throw e;
    }
  }
}
