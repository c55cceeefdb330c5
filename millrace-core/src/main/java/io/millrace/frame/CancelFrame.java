package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** CANCEL (0x09): the requester abandons a stream. The frame is the header alone. */
public final class CancelFrame {
  private CancelFrame() {}

  public static ByteBuf encode(ByteBufAllocator alloc, int headroom, int streamId) {
    return Frames.start(alloc, headroom, 0, streamId, FrameType.CANCEL, 0);
  }
}
