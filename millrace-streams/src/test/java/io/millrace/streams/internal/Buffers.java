package io.millrace.streams.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/** Buffers for the sinks' and publishers' tests. */
final class Buffers {
  private Buffers() {}

  /** {@code s} in UTF-8 in a new direct buffer (the caller's to release, or to hand over). */
  static ByteBuf direct(String s) {
    return ByteBufAllocator.DEFAULT.directBuffer().writeBytes(s.getBytes(StandardCharsets.UTF_8));
  }
}
