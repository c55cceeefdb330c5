package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * LEASE (0x02), stream 0: the responder allows at most N requests within a time-to-live.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|                       Time-To-Live                          |
 * +-+-------------------------------------------------------------+
 * |0|                     Number of Requests                      |
 * +-+-------------------------------------------------------------+
 *                  Metadata (rest of frame, if M; no length prefix)
 * </pre>
 */
public final class LeaseFrame {
  static final int TTL_OFFSET = FrameHeader.SIZE;
  static final int REQUESTS_OFFSET = TTL_OFFSET + 4;
  static final int METADATA_OFFSET = REQUESTS_OFFSET + 4;

  private LeaseFrame() {}

  /** Encodes a LEASE; the caller keeps ownership of {@code metadata}, which may be null. */
  public static ByteBuf encode(
      ByteBufAllocator alloc, int headroom, int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    ByteBuf out =
        Frames.start(
            alloc,
            headroom,
            8 + Frames.readable(metadata),
            0,
            FrameType.LEASE,
            Frames.metadataFlag(metadata));
    out.writeInt(ttlMillis);
    out.writeInt(numberOfRequests);
    if (metadata != null) {
      Frames.copyOrRelease(metadata, out);
    }
    return out;
  }

  public static int ttl(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + TTL_OFFSET);
  }

  public static int numberOfRequests(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + REQUESTS_OFFSET);
  }

  /** The metadata as a slice sharing the frame's memory, or null without M. */
  public static ByteBuf metadata(ByteBuf frame) {
    if (!FrameHeader.hasMetadata(frame)) {
      return null;
    }
    int start = frame.readerIndex() + METADATA_OFFSET;
    return frame.slice(start, frame.writerIndex() - start);
  }
}
