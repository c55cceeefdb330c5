package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * RESUME_OK (0x0E), stream 0: the server accepts a RESUME.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|           Last Received Client Position (u63)               |
 * +-+-------------------------------------------------------------+
 * </pre>
 */
public final class ResumeOkFrame {
  private ResumeOkFrame() {}

  public static ByteBuf encode(
      ByteBufAllocator alloc, int headroom, long lastReceivedClientPosition) {
    ByteBuf out = Frames.start(alloc, headroom, 8, 0, FrameType.RESUME_OK, 0);
    out.writeLong(lastReceivedClientPosition);
    return out;
  }

  public static long lastReceivedClientPosition(ByteBuf frame) {
    return frame.getLong(frame.readerIndex() + FrameHeader.SIZE) & Long.MAX_VALUE;
  }
}
