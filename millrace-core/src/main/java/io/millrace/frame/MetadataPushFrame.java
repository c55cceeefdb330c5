package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * METADATA_PUSH (0x0C), stream 0: connection-level metadata, the rest of the frame. M is always
 * set; there is no length prefix.
 */
public final class MetadataPushFrame {
  private MetadataPushFrame() {}

  /** Encodes the frame; the caller keeps ownership of {@code metadata}. */
  public static ByteBuf encode(ByteBufAllocator alloc, int headroom, ByteBuf metadata) {
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            metadata.readableBytes(),
            0,
            FrameType.METADATA_PUSH,
            FrameHeader.FLAG_METADATA);
    Frames.copyOrRelease(metadata, out);
    return out;
  }

  public static ByteBuf metadata(ByteBuf frame) {
    int start = frame.readerIndex() + FrameHeader.SIZE;
    return frame.slice(start, frame.writerIndex() - start);
  }
}
