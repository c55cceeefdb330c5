package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * RESUME (0x0D), stream 0: a client asks to resume a session on a new connection.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |         Major Version         |         Minor Version         |
 * +-------------------------------+-------------------------------+
 * |         Token Length          | Resume Identification Token ...
 * +-+-------------------------------------------------------------+
 * |0|           Last Received Server Position (u63)               |
 * +-+-------------------------------------------------------------+
 * |0|           First Available Client Position (u63)             |
 * +-+-------------------------------------------------------------+
 * </pre>
 */
public final class ResumeFrame {
  static final int TOKEN_LENGTH_OFFSET = FrameHeader.SIZE + 4;

  private ResumeFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code token}. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      ByteBuf token,
      long lastReceivedServerPosition,
      long firstAvailableClientPosition) {
    int tokenLength = token.readableBytes();
    ByteBuf out = Frames.start(alloc, headroom, 22 + tokenLength, 0, FrameType.RESUME, 0);
    out.writeShort(1);
    out.writeShort(0);
    out.writeShort(tokenLength);
    out.writeBytes(token, token.readerIndex(), tokenLength);
    out.writeLong(lastReceivedServerPosition);
    out.writeLong(firstAvailableClientPosition);
    return out;
  }

  /** Whether {@code frame} (a RESUME) is long enough for its token and both positions. */
  public static boolean isWellFormed(ByteBuf frame) {
    int readable = frame.readableBytes();
    if (readable < TOKEN_LENGTH_OFFSET + 2) {
      return false;
    }
    return readable >= positionsOffset(frame) - frame.readerIndex() + 16;
  }

  public static int majorVersion(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + FrameHeader.SIZE);
  }

  public static int minorVersion(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + FrameHeader.SIZE + 2);
  }

  public static ByteBuf token(ByteBuf frame) {
    int start = frame.readerIndex() + TOKEN_LENGTH_OFFSET;
    return frame.slice(start + 2, frame.getUnsignedShort(start));
  }

  public static long lastReceivedServerPosition(ByteBuf frame) {
    return frame.getLong(positionsOffset(frame)) & Long.MAX_VALUE;
  }

  public static long firstAvailableClientPosition(ByteBuf frame) {
    return frame.getLong(positionsOffset(frame) + 8) & Long.MAX_VALUE;
  }

  static int positionsOffset(ByteBuf frame) {
    int start = frame.readerIndex() + TOKEN_LENGTH_OFFSET;
    return start + 2 + frame.getUnsignedShort(start);
  }
}
