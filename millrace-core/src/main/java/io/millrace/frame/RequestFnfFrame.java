package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * REQUEST_FNF (0x05): fire-and-forget, no response. Same layout as {@link RequestResponseFrame}.
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
public final class RequestFnfFrame {
  private RequestFnfFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code metadata} (nullable) and data. */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      boolean follows,
      ByteBuf metadata,
      ByteBuf data) {
    return RequestResponseFrame.encode(
        alloc, headroom, FrameType.REQUEST_FNF, streamId, follows, metadata, data);
  }

  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, FrameHeader.SIZE);
  }

  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, FrameHeader.SIZE);
  }
}
