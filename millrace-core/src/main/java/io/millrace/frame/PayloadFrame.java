package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * PAYLOAD (0x0A): an element (N), the end of a stream (C), or both; also every continuation
 * fragment of a fragmented request or payload (F).
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |              Metadata Length (u24, if M) + Metadata           |
 * +---------------------------------------------------------------+
 * |                             Data                              |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * Flags: M (0x100), F (0x80) follows, C (0x40) complete, N (0x20) next. A frame with neither C nor
 * N is invalid.
 */
public final class PayloadFrame {
  private PayloadFrame() {}

  /**
   * Encodes the frame with the given {@link FrameHeader} flag bits among F, C and N; M is derived
   * from {@code metadata}. The caller keeps ownership of {@code metadata} (nullable) and data.
   */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      int streamId,
      int flags,
      ByteBuf metadata,
      ByteBuf data) {
    int allFlags =
        flags & (FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_COMPLETE | FrameHeader.FLAG_NEXT)
            | Frames.metadataFlag(metadata);
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            Frames.copiedPayloadLength(metadata, data),
            streamId,
            FrameType.PAYLOAD,
            allFlags);
    return Frames.payload(alloc, out, metadata, data);
  }

  /** Data of at least this many bytes is better sent without a copy (see {@link #encode}). */
  public static final int ZERO_COPY_THRESHOLD = Frames.ZERO_COPY_THRESHOLD;

  /** Encodes an empty PAYLOAD with C only: the end of a stream. */
  public static ByteBuf encodeComplete(ByteBufAllocator alloc, int headroom, int streamId) {
    return Frames.start(alloc, headroom, 0, streamId, FrameType.PAYLOAD, FrameHeader.FLAG_COMPLETE);
  }

  public static ByteBuf metadata(ByteBuf frame) {
    return Frames.metadata(frame, FrameHeader.SIZE);
  }

  public static ByteBuf data(ByteBuf frame) {
    return Frames.data(frame, FrameHeader.SIZE);
  }
}
