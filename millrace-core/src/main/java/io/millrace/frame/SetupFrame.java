package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * SETUP (0x01), the client's first frame on stream 0.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |         Major Version         |         Minor Version         |
 * +-+-------------------------------------------------------------+
 * |0|                 Time Between KEEPALIVE Frames               |
 * +-+-------------------------------------------------------------+
 * |0|                       Max Lifetime                          |
 * +-------------------------------+-------------------------------+
 * |         Token Length          | Resume Identification Token  (if R)
 * +---------------+---------------+-------------------------------+
 * |  MIME Length  |   Metadata Encoding MIME Type               ...
 * +---------------+-----------------------------------------------+
 * |  MIME Length  |   Data Encoding MIME Type                   ...
 * +---------------+-----------------------------------------------+
 *                   Metadata Length (u24, if M) + Metadata, then Data
 * </pre>
 *
 * Flags: M (0x100) metadata, R (0x80) resume enabled, L (0x40) lease.
 */
public final class SetupFrame {
  static final int VERSION_OFFSET = FrameHeader.SIZE;
  static final int KEEPALIVE_OFFSET = VERSION_OFFSET + 4;
  static final int LIFETIME_OFFSET = KEEPALIVE_OFFSET + 4;
  static final int VARIABLE_OFFSET = LIFETIME_OFFSET + 4;

  private SetupFrame() {}

  /**
   * Encodes a SETUP frame. {@code resumeToken} null means no R flag; the caller keeps ownership of
   * every buffer passed in.
   */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int headroom,
      boolean lease,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      ByteBuf resumeToken,
      String metadataMimeType,
      String dataMimeType,
      ByteBuf metadata,
      ByteBuf data) {
    byte[] metadataMime = mime(metadataMimeType);
    byte[] dataMime = mime(dataMimeType);
    int flags =
        Frames.metadataFlag(metadata)
            | (resumeToken != null ? FrameHeader.FLAG_RESUME : 0)
            | (lease ? FrameHeader.FLAG_LEASE : 0);
    int body =
        12
            + (resumeToken != null ? 2 + resumeToken.readableBytes() : 0)
            + 2
            + metadataMime.length
            + dataMime.length
            + Frames.copiedPayloadLength(metadata, data);
    ByteBuf out = Frames.start(alloc, headroom, body, 0, FrameType.SETUP, flags);
    out.writeShort(1);
    out.writeShort(0);
    out.writeInt(keepAliveIntervalMillis);
    out.writeInt(maxLifetimeMillis);
    if (resumeToken != null) {
      out.writeShort(resumeToken.readableBytes());
      Frames.copyOrRelease(resumeToken, out);
    }
    out.writeByte(metadataMime.length);
    out.writeBytes(metadataMime);
    out.writeByte(dataMime.length);
    out.writeBytes(dataMime);
    return Frames.payload(alloc, out, metadata, data);
  }

  private static byte[] mime(String mimeType) {
    byte[] bytes = mimeType.getBytes(StandardCharsets.US_ASCII);
    if (bytes.length > 255) {
      throw new IllegalArgumentException("MIME type longer than 255 bytes: " + mimeType);
    }
    return bytes;
  }

  public static int majorVersion(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + VERSION_OFFSET);
  }

  public static int minorVersion(ByteBuf frame) {
    return frame.getUnsignedShort(frame.readerIndex() + VERSION_OFFSET + 2);
  }

  public static int keepAliveInterval(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + KEEPALIVE_OFFSET);
  }

  public static int maxLifetime(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + LIFETIME_OFFSET);
  }

  public static boolean resumeEnabled(ByteBuf frame) {
    return (FrameHeader.flags(frame) & FrameHeader.FLAG_RESUME) != 0;
  }

  public static boolean leaseEnabled(ByteBuf frame) {
    return (FrameHeader.flags(frame) & FrameHeader.FLAG_LEASE) != 0;
  }
}
