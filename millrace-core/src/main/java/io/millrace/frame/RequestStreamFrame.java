package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * REQUEST_STREAM (0x06): a request for a finite or infinite stream of responses.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|                    Initial Request N (u31, > 0)             |
 * +-+-------------------------------------------------------------+
 * |              Metadata Length (u24, if M) + Metadata           |
 * +---------------------------------------------------------------+
 * |                             Data                              |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * Flags: M (0x100), F (0x80) follows.
 */
public final class RequestStreamFrame {
  static final int PAYLOAD_OFFSET = FrameHeader.SIZE + 4;

  private RequestStreamFrame() {}

  /**
   * Encodes the frame; {@code initialRequestN} above 2^31-1 is written as 2^31-1 (unbounded). The
   * caller keeps ownership of {@code metadata} (nullable) and data.
   */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      boolean follows,
      long initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    return encode(
        alloc,
        headroom,
        FrameType.REQUEST_STREAM,
        streamId,
        follows ? FrameHeader.FLAG_FOLLOWS : 0,
        initialRequestN,
        metadata,
        data);
  }

  static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int type,
      int streamId,
      int flags,
      long initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    int requestN = RequestNFrame.clamp(initialRequestN); // validate before allocating
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            4 + Frames.copiedPayloadLength(metadata, data),
            streamId,
            type,
            flags | Frames.metadataFlag(metadata));
    out.writeInt(requestN);
    return Frames.payload(alloc, out, metadata, data);
  }

  /** The initial request-n as sent: 1 to 2^31-1. */
  public static int initialRequestN(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + FrameHeader.SIZE) & 0x7FFF_FFFF;
  }

  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, PAYLOAD_OFFSET);
  }

  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, PAYLOAD_OFFSET);
  }
}
