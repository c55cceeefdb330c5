package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * REQUEST_RESPONSE (0x04): one request, one response.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |              Metadata Length (u24, if M) + Metadata           |
 * +---------------------------------------------------------------+
 * |                             Data                              |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * Flags: M (0x100), F (0x80) follows.
 */
public final class RequestResponseFrame {
  private RequestResponseFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code metadata} (nullable) and data. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      boolean follows,
      ByteBuf metadata,
      ByteBuf data) {
    return encode(alloc, headroom, FrameType.REQUEST_RESPONSE, streamId, follows, metadata, data);
  }

  static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int type,
      int streamId,
      boolean follows,
      ByteBuf metadata,
      ByteBuf data) {
    int flags = Frames.metadataFlag(metadata) | (follows ? FrameHeader.FLAG_FOLLOWS : 0);
    ByteBuf out =
        Frames.start(
            alloc, headroom, Frames.copiedPayloadLength(metadata, data), streamId, type, flags);
    return Frames.payload(alloc, out, metadata, data);
  }

  /** Metadata as a slice of the frame, or null without M. */
  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, FrameHeader.SIZE);
  }

  /** Data as a slice of the frame. */
  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, FrameHeader.SIZE);
  }
}
