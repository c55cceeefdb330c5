package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * KEEPALIVE (0x03), stream 0. R (0x80) asks the receiver to answer with the same data.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|                  Last Received Position (u63)               |
 * +                                                               +
 * |                                                               |
 * +---------------------------------------------------------------+
 *                              Data
 * </pre>
 */
public final class KeepAliveFrame {
  static final int POSITION_OFFSET = FrameHeader.SIZE;
  static final int DATA_OFFSET = POSITION_OFFSET + 8;

  private KeepAliveFrame() {}

  /** Encodes a KEEPALIVE; the caller keeps ownership of {@code data}, which may be null. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      boolean respond,
      long lastReceivedPosition,
      ByteBuf data) {
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            8 + Frames.readable(data),
            0,
            FrameType.KEEPALIVE,
            respond ? FrameHeader.FLAG_RESPOND : 0);
    out.writeLong(lastReceivedPosition);
    if (data != null) {
      Frames.copyOrRelease(data, out);
    }
    return out;
  }

  public static boolean respond(ByteBuf frame) {
    return (FrameHeader.flags(frame) & FrameHeader.FLAG_RESPOND) != 0;
  }

  public static long lastReceivedPosition(ByteBuf frame) {
    return frame.getLong(frame.readerIndex() + POSITION_OFFSET) & Long.MAX_VALUE;
  }

  /** The data as a slice sharing the frame's memory. */
  public static ByteBuf data(ByteBuf frame) {
    int start = frame.readerIndex() + DATA_OFFSET;
    return frame.slice(start, frame.writerIndex() - start);
  }
}
