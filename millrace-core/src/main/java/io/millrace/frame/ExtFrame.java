package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * EXT (0x3F): an extension frame; I (0x200) lets a receiver that does not know the extended type
 * ignore it.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|                     Extended Type (u31)                     |
 * +-+-------------------------------------------------------------+
 * |              Metadata Length (u24, if M) + Metadata           |
 * +---------------------------------------------------------------+
 * |                             Data                              |
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class ExtFrame {
  static final int PAYLOAD_OFFSET = FrameHeader.SIZE + 4;

  private ExtFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code metadata} (nullable) and data. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      boolean ignore,
      int extendedType,
      ByteBuf metadata,
      ByteBuf data) {
    int flags = Frames.metadataFlag(metadata) | (ignore ? FrameHeader.FLAG_IGNORE : 0);
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            4 + Frames.copiedPayloadLength(metadata, data),
            streamId,
            FrameType.EXT,
            flags);
    out.writeInt(extendedType & 0x7FFF_FFFF);
    return Frames.payload(alloc, out, metadata, data);
  }

  public static boolean ignore(ByteBuf frame) {
    return (FrameHeader.flags(frame) & FrameHeader.FLAG_IGNORE) != 0;
  }

  public static int extendedType(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + FrameHeader.SIZE) & 0x7FFF_FFFF;
  }

  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, PAYLOAD_OFFSET);
  }

  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, PAYLOAD_OFFSET);
  }
}
