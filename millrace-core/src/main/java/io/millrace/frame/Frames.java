package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Shared encoding and decoding steps of the frame flyweights.
 *
 * <p>Every encoder returns one buffer whose first {@code headroom} bytes are reserved for the
 * transport (a TCP transport writes its 3-byte length prefix there, so a frame is one buffer and
 * one write). The caller keeps ownership of the metadata and data it passes in: encoders copy small
 * payloads into the frame and add a retained slice of large ones, so the caller releases its
 * buffers as usual either way.
 */
final class Frames {
  /**
   * Data of this many bytes or more is not copied: the frame becomes a composite of the header
   * buffer and a retained slice of the data. Below it one copy is cheaper than a composite.
   */
  static final int ZERO_COPY_THRESHOLD = 4096;

  private Frames() {}

  static int readable(ByteBuf buf) {
    return buf == null ? 0 : buf.readableBytes();
  }

  static int metadataFlag(ByteBuf metadata) {
    return metadata == null ? 0 : FrameHeader.FLAG_METADATA;
  }

  /** Length of the optional length-prefixed metadata plus data, as written by {@link #payload}. */
  static int payloadLength(ByteBuf metadata, ByteBuf data) {
    return (metadata == null ? 0 : 3 + metadata.readableBytes()) + readable(data);
  }

  /**
   * Allocates a frame buffer with {@code headroom} reserved bytes and the header written, sized for
   * {@code bodyLength} more bytes. Data beyond {@link #ZERO_COPY_THRESHOLD} is left out of the
   * size: {@link #finish} attaches it without a copy.
   */
  static ByteBuf start(
      ByteBufAllocator alloc, int headroom, int bodyLength, int streamId, int type, int flags) {
    ByteBuf out = alloc.buffer(headroom + FrameHeader.SIZE + bodyLength);
    out.writerIndex(headroom);
    FrameHeader.write(out, streamId, type, flags);
    return out;
  }

  static boolean zeroCopy(ByteBuf data) {
    return data != null && data.readableBytes() >= ZERO_COPY_THRESHOLD;
  }

  /** The part of a metadata-and-data body written into the header buffer. */
  static int copiedPayloadLength(ByteBuf metadata, ByteBuf data) {
    return zeroCopy(data) ? payloadLength(metadata, null) : payloadLength(metadata, data);
  }

  /**
   * Writes metadata (u24 length + bytes, when present) and data, or defers large data. Releases
   * {@code out} when a source buffer cannot be read (released by mistake, say) and rethrows, so a
   * caller's bug never leaks the frame buffer.
   */
  static ByteBuf payload(ByteBufAllocator alloc, ByteBuf out, ByteBuf metadata, ByteBuf data) {
    ByteBuf slice;
    try {
      if (metadata != null) {
        int length = metadata.readableBytes();
        if (length > FrameHeader.MAX_METADATA_LENGTH) {
          throw new IllegalArgumentException("metadata longer than 16 MiB: " + length);
        }
        out.writeMedium(length);
        copy(metadata, out);
      }
      if (data == null || data.readableBytes() == 0) {
        return out;
      }
      if (!zeroCopy(data)) {
        copy(data, out);
        return out;
      }
      slice = data.retainedSlice();
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
    CompositeByteBuf composite = alloc.compositeBuffer(2);
    composite.addComponent(true, out);
    composite.addComponent(true, slice);
    return composite;
  }

  /** {@link #copy}, releasing {@code out} and rethrowing when {@code src} cannot be read. */
  static void copyOrRelease(ByteBuf src, ByteBuf out) {
    try {
      copy(src, out);
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  /**
   * Appends {@code src}'s readable bytes to {@code out} without moving {@code src}'s indexes.
   *
   * <p>Asks the source to copy into the destination rather than the destination to read from the
   * source: between two direct buffers with memory addresses that is one memory copy, where {@code
   * out.writeBytes(src)} on Netty 4.2's adaptive buffers builds NIO views of both (three objects
   * and most of the time of a small payload's encoding, as profiled).
   */
  static void copy(ByteBuf src, ByteBuf out) {
    int length = src.readableBytes();
    out.ensureWritable(length);
    int writerIndex = out.writerIndex();
    src.getBytes(src.readerIndex(), out, writerIndex, length);
    out.writerIndex(writerIndex + length);
  }

  /** Metadata of a frame whose metadata section starts at {@code offset}, or null without M. */
  static ByteBuf metadata(ByteBuf frame, int offset) {
    if (!FrameHeader.hasMetadata(frame)) {
      return null;
    }
    int start = frame.readerIndex() + offset;
    int length = frame.getUnsignedMedium(start);
    return frame.slice(start + 3, length);
  }

  /** Data of a frame whose metadata section starts at {@code offset}: everything after metadata. */
  static ByteBuf data(ByteBuf frame, int offset) {
    int start = frame.readerIndex() + offset;
    if (FrameHeader.hasMetadata(frame)) {
      start += 3 + frame.getUnsignedMedium(start);
    }
    return frame.slice(start, frame.writerIndex() - start);
  }

  /**
   * Checks that the metadata length of a frame whose metadata section starts at {@code offset} fits
   * in the frame; returns false for a malformed frame.
   */
  static boolean payloadFits(ByteBuf frame, int offset) {
    int length = frame.readableBytes();
    if (length < offset) {
      return false;
    }
    if (!FrameHeader.hasMetadata(frame)) {
      return true;
    }
    if (length < offset + 3) {
      return false;
    }
    return offset + 3 + frame.getUnsignedMedium(frame.readerIndex() + offset) <= length;
  }
}
