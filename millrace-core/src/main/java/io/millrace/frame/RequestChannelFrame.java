package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * REQUEST_CHANNEL (0x07): opens a bidirectional stream; carries the requester's first payload.
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
 * Flags: M (0x100), F (0x80) follows, C (0x40) the requester's side is already complete.
 */
public final class RequestChannelFrame {
  private RequestChannelFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code metadata} (nullable) and data. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      boolean follows,
      boolean complete,
      long initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    int flags =
        (follows ? FrameHeader.FLAG_FOLLOWS : 0) | (complete ? FrameHeader.FLAG_COMPLETE : 0);
    return RequestStreamFrame.encode(
        alloc,
        headroom,
        FrameType.REQUEST_CHANNEL,
        streamId,
        flags,
        initialRequestN,
        metadata,
        data);
  }

  public static boolean complete(ByteBuf frame) {
    return (FrameHeader.flags(frame) & FrameHeader.FLAG_COMPLETE) != 0;
  }

  public static int initialRequestN(ByteBuf frame) {
    return RequestStreamFrame.initialRequestN(frame);
  }

  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, RequestStreamFrame.PAYLOAD_OFFSET);
  }

  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, RequestStreamFrame.PAYLOAD_OFFSET);
  }
}
