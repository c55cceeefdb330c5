package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;

/**
 * Appends small frames, each with its 3-byte length prefix, to a batch buffer that goes to the
 * transport as one write.
 *
 * <p>This is the per-message encoding path, so it is written for few checked buffer accesses: one
 * {@code ensureWritable} for the whole frame, the prefix and header (9 bytes) as one 8-byte and one
 * 1-byte store, and each payload part as one {@code getBytes} from its buffer. Where Netty can give
 * the batch's memory address (a direct buffer, with {@code sun.misc.Unsafe}, on a CPU that allows
 * unaligned stores) the prefix and header are stored straight to memory: the batch is the caller's
 * own buffer and {@code ensureWritable} has just made room, so the checks Netty would repeat per
 * access (reference count, bounds) cannot fail there. The application's buffers are always read
 * through Netty's checked {@code getBytes}, so a released payload still fails cleanly.
 *
 * <p>The writer index moves once, after the whole frame is written: a frame that fails (an
 * unreadable payload) leaves the batch exactly as it was.
 */
public final class FrameBatch {
  private static final boolean RAW_STORES =
      PlatformDependent.hasUnsafe() && PlatformDependent.isUnaligned();

  private FrameBatch() {}

  /**
   * Length of a frame (without its prefix) with {@code extra} fixed bytes after the header and the
   * given payload, both copied.
   */
  public static int length(int extra, ByteBuf metadata, ByteBuf data) {
    return FrameHeader.SIZE + extra + Frames.payloadLength(metadata, data);
  }

  /**
   * Appends a frame made of the header and optional metadata and data (REQUEST_FNF,
   * REQUEST_RESPONSE, PAYLOAD, CANCEL): M is set when {@code metadata} is not null.
   */
  public static void append(
      ByteBuf out, int streamId, int type, int flags, ByteBuf metadata, ByteBuf data) {
    int length = length(0, metadata, data);
    int start = out.writerIndex();
    out.ensureWritable(FrameHeader.LENGTH_PREFIX_SIZE + length);
    int at =
        prefixAndHeader(out, start, length, streamId, type, flags | Frames.metadataFlag(metadata));
    out.writerIndex(payload(out, at, metadata, data));
  }

  /**
   * Starts a frame like {@link #append} whose {@code dataLength} bytes of data the caller writes
   * itself, at the returned index, before moving the writer index past them (to that index plus
   * {@code dataLength}): the prefix, header and metadata are in place, the writer index has not
   * moved, and the room is there. A caller that fails to write the data leaves the batch as it was
   * by not moving the writer index. {@code requestN} follows the header (REQUEST_STREAM,
   * REQUEST_CHANNEL), or is {@link #NO_REQUEST_N}.
   */
  public static int begin(
      ByteBuf out,
      int streamId,
      int type,
      int flags,
      int requestN,
      ByteBuf metadata,
      int dataLength) {
    int extra = requestN == NO_REQUEST_N ? 0 : 4;
    int length = FrameHeader.SIZE + extra + Frames.payloadLength(metadata, null) + dataLength;
    int start = out.writerIndex();
    out.ensureWritable(FrameHeader.LENGTH_PREFIX_SIZE + length);
    int at =
        prefixAndHeader(out, start, length, streamId, type, flags | Frames.metadataFlag(metadata));
    if (extra != 0) {
      out.setInt(at, requestN);
    }
    return payload(out, at + extra, metadata, null);
  }

  /**
   * {@link #begin}'s {@code requestN} for a frame without one (all but REQUEST_STREAM, _CHANNEL).
   */
  public static final int NO_REQUEST_N = -1;

  /**
   * Appends a frame whose header is followed by a request-n (REQUEST_STREAM, REQUEST_CHANNEL,
   * REQUEST_N), then optional metadata and data.
   */
  public static void appendWithRequestN(
      ByteBuf out,
      int streamId,
      int type,
      int flags,
      int requestN,
      ByteBuf metadata,
      ByteBuf data) {
    int length = length(4, metadata, data);
    int start = out.writerIndex();
    out.ensureWritable(FrameHeader.LENGTH_PREFIX_SIZE + length);
    int at =
        prefixAndHeader(out, start, length, streamId, type, flags | Frames.metadataFlag(metadata));
    out.setInt(at, requestN);
    out.writerIndex(payload(out, at + 4, metadata, data));
  }

  /** Stores the prefix and header at {@code index}; returns the index after them. */
  private static int prefixAndHeader(
      ByteBuf out, int index, int length, int streamId, int type, int flags) {
    int typeAndFlags = type << FrameHeader.TYPE_SHIFT | flags & FrameHeader.FLAGS_MASK;
    long first8 = (long) length << 40 | (streamId & 0xFFFF_FFFFL) << 8 | typeAndFlags >>> 8;
    if (RAW_STORES && out.hasMemoryAddress()) {
      long address = out.memoryAddress() + index;
      PlatformDependent.putLong(
          address, PlatformDependent.BIG_ENDIAN_NATIVE_ORDER ? first8 : Long.reverseBytes(first8));
      PlatformDependent.putByte(address + 8, (byte) typeAndFlags);
    } else {
      out.setLong(index, first8);
      out.setByte(index + 8, typeAndFlags);
    }
    return index + FrameHeader.LENGTH_PREFIX_SIZE + FrameHeader.SIZE;
  }

  /** Copies metadata (u24 length first) and data to {@code at}; returns the index after them. */
  private static int payload(ByteBuf out, int at, ByteBuf metadata, ByteBuf data) {
    if (metadata != null) {
      int m = metadata.readableBytes();
      out.setMedium(at, m);
      metadata.getBytes(metadata.readerIndex(), out, at + 3, m);
      at += 3 + m;
    }
    if (data != null) {
      int d = data.readableBytes();
      data.getBytes(data.readerIndex(), out, at, d);
      at += d;
    }
    return at;
  }
}
