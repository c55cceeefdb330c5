package io.millrace.frame;

import io.netty.buffer.ByteBuf;

/**
 * The six-byte header that starts every RSocket frame.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-------------------------------------------------------------+
 * |0|                         Stream ID                           |
 * +-----------+-+-+---------------+-------------------------------+
 * |Frame Type |I|M|     Flags     |
 * +-------------------------------+
 * </pre>
 *
 * <p>All accessors read at offsets relative to the frame's reader index and never move indexes.
 */
public final class FrameHeader {
  /** Bytes in the header. */
  public static final int SIZE = 6;

  /** Bytes of the length prefix that stream transports (TCP) put before each frame. */
  public static final int LENGTH_PREFIX_SIZE = 3;

  /** Largest frame the protocol can frame over TCP: the 24-bit length. */
  public static final int MAX_FRAME_LENGTH = 0xFF_FFFF;

  /** Largest 24-bit metadata length. */
  public static final int MAX_METADATA_LENGTH = 0xFF_FFFF;

  /** I: ignore the frame if not understood. */
  public static final int FLAG_IGNORE = 0x200;

  /** M: metadata present. */
  public static final int FLAG_METADATA = 0x100;

  /** F: follows (more fragments come), on request frames and PAYLOAD. */
  public static final int FLAG_FOLLOWS = 0x80;

  /** C: complete, on REQUEST_CHANNEL and PAYLOAD. */
  public static final int FLAG_COMPLETE = 0x40;

  /** N: next, on PAYLOAD. */
  public static final int FLAG_NEXT = 0x20;

  /** R: respond, on KEEPALIVE. */
  public static final int FLAG_RESPOND = 0x80;

  /** R: resume enabled, on SETUP. */
  public static final int FLAG_RESUME = 0x80;

  /** L: lease, on SETUP. */
  public static final int FLAG_LEASE = 0x40;

  static final int FLAGS_MASK = 0x3FF;
  static final int TYPE_SHIFT = 10;

  private FrameHeader() {}

  /** Writes the header at the buffer's writer index. */
  public static void write(ByteBuf out, int streamId, int type, int flags) {
    out.writeInt(streamId);
    out.writeShort(type << TYPE_SHIFT | flags & FLAGS_MASK);
  }

  public static int streamId(ByteBuf frame) {
    return frame.getInt(frame.readerIndex()) & 0x7FFF_FFFF;
  }

  public static int type(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + 4) >>> TYPE_SHIFT;
  }

  public static int flags(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + 4) & FLAGS_MASK;
  }

  public static boolean hasMetadata(ByteBuf frame) {
    return (flags(frame) & FLAG_METADATA) != 0;
  }

  /** Whether the high bit of the stream id, reserved and always 0, is set. */
  public static boolean hasReservedStreamBit(ByteBuf frame) {
    return frame.getInt(frame.readerIndex()) < 0;
  }
}
