package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.internal.PlatformDependent;

/**
 * Appends small frames, each with its 3-byte length prefix, to a batch buffer that goes to the
 * transport as one write.
 *
 * <p>This is the per-message encoding path, so it is written for few checked buffer accesses and
 * few call levels. Where Netty can give the batch's memory address (a direct buffer, with {@code
 * sun.misc.Unsafe}, on a CPU that allows unaligned stores) the caller takes it once per batch
 * ({@link #address}) and the frame is stored straight to memory: the prefix and header as one
 * 8-byte and one 1-byte store, each payload part copied from its buffer's address or array. The
 * batch is the caller's own buffer with room already made, so the checks Netty would repeat per
 * access (reference count, bounds) cannot fail there. The application's buffers are checked: one
 * that is released fails with {@link IllegalReferenceCountException} before anything of it is read,
 * since Netty's address and array accessors check the count (a derived buffer's own, through its
 * {@code unwrap()}, then its parent's). A composite buffer answers those from its first component
 * without looking at its own count, so composites, and buffers with neither an address nor an
 * array, go through Netty's checked {@code getBytes}.
 *
 * <p>{@link #header}, {@link #metadata} and {@link #copy} store to the address the caller gives,
 * unchecked: they are the connection's frame writer's, which makes the room and keeps the address
 * of its own batch.
 *
 * <p>Call levels matter here. A payload sent from below a reactive library's chain of operators
 * reaches this class some ten calls deep, and the JIT stops inlining at 15 levels below the method
 * it compiles (JDK 17 to 25, {@code -XX:MaxInlineLevel}): each accessor beyond that stays a real
 * call, on every payload. Netty's checked accessors are six to twelve levels deep each (reference
 * count, bounds, the destination's own checks), so the per-frame path calls as few of them as it
 * can, from as high as it can; the JIT's log ({@code -XX:+LogCompilation}) shows where it stops.
 *
 * <p>The writer index moves once, after the whole frame is written: a frame that fails (an
 * unreadable payload) leaves the batch's readable bytes exactly as they were.
 */
public final class FrameBatch {
  private static final boolean RAW_STORES =
      PlatformDependent.hasUnsafe() && PlatformDependent.isUnaligned();

  /** Payload parts up to this many bytes are copied a word at a time instead of by copyMemory. */
  private static final int WORD_COPY_LIMIT = 32;

  private FrameBatch() {}

  /**
   * The address frames are stored at in {@code out}, or 0 where they are written through its
   * accessors. It holds until {@code out}'s capacity changes.
   */
  public static long address(ByteBuf out) {
    return RAW_STORES && out.hasMemoryAddress() ? out.memoryAddress() : 0;
  }

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
    appendWithRequestN(out, streamId, type, flags, NO_REQUEST_N, metadata, data);
  }

  /**
   * The {@code requestN} of a frame without one (all but REQUEST_STREAM, REQUEST_CHANNEL and
   * REQUEST_N).
   */
  public static final int NO_REQUEST_N = -1;

  /**
   * Appends a frame whose header is followed by a request-n (REQUEST_STREAM, REQUEST_CHANNEL,
   * REQUEST_N), or not ({@link #NO_REQUEST_N}), then optional metadata and data.
   */
  public static void appendWithRequestN(
      ByteBuf out,
      int streamId,
      int type,
      int flags,
      int requestN,
      ByteBuf metadata,
      ByteBuf data) {
    int length = length(requestN == NO_REQUEST_N ? 0 : 4, metadata, data);
    int start = out.writerIndex();
    out.ensureWritable(FrameHeader.LENGTH_PREFIX_SIZE + length);
    long address = address(out);
    int at = header(out, address, start, length, streamId, type, flags, metadata, requestN);
    if (metadata != null) {
      at = metadata(out, address, at, metadata);
    }
    if (data != null) {
      at = copy(out, address, at, data, data.readableBytes());
    }
    out.writerIndex(at);
  }

  /**
   * Stores the prefix and header of a frame of {@code length} bytes at {@code index}, where room is
   * made, with the M flag when {@code metadata} is not null and then {@code requestN} unless it is
   * {@link #NO_REQUEST_N}; {@code address} is {@link #address}'s. Returns the index after them.
   */
  public static int header(
      ByteBuf out,
      long address,
      int index,
      int length,
      int streamId,
      int type,
      int flags,
      ByteBuf metadata,
      int requestN) {
    int typeAndFlags =
        type << FrameHeader.TYPE_SHIFT
            | (flags | Frames.metadataFlag(metadata)) & FrameHeader.FLAGS_MASK;
    long first8 = (long) length << 40 | (streamId & 0xFFFF_FFFFL) << 8 | typeAndFlags >>> 8;
    int at = index + FrameHeader.LENGTH_PREFIX_SIZE + FrameHeader.SIZE;
    if (address != 0) {
      long a = address + index;
      PlatformDependent.putLong(
          a, PlatformDependent.BIG_ENDIAN_NATIVE_ORDER ? first8 : Long.reverseBytes(first8));
      PlatformDependent.putByte(a + 8, (byte) typeAndFlags);
      if (requestN != NO_REQUEST_N) {
        PlatformDependent.putInt(
            a + 9,
            PlatformDependent.BIG_ENDIAN_NATIVE_ORDER ? requestN : Integer.reverseBytes(requestN));
        at += 4;
      }
    } else {
      out.setLong(index, first8);
      out.setByte(index + 8, typeAndFlags);
      if (requestN != NO_REQUEST_N) {
        out.setInt(at, requestN);
        at += 4;
      }
    }
    return at;
  }

  /**
   * Copies {@code metadata} with its u24 length first to {@code at}, where room is made; returns
   * the index after it. Throws {@link IllegalReferenceCountException} for a released buffer.
   */
  public static int metadata(ByteBuf out, long address, int at, ByteBuf metadata) {
    int m = metadata.readableBytes();
    if (address != 0) {
      PlatformDependent.putByte(address + at, (byte) (m >>> 16));
      PlatformDependent.putByte(address + at + 1, (byte) (m >>> 8));
      PlatformDependent.putByte(address + at + 2, (byte) m);
    } else {
      out.setMedium(at, m);
    }
    return copy(out, address, at + 3, metadata, m);
  }

  /**
   * Copies the {@code n} readable bytes of {@code src} to {@code at}, where room is made; returns
   * the index after them. Throws {@link IllegalReferenceCountException} for a released buffer.
   */
  public static int copy(ByteBuf out, long address, int at, ByteBuf src, int n) {
    if (address != 0 && !(src instanceof CompositeByteBuf)) {
      if (src.hasMemoryAddress()) {
        copyMemory(src.memoryAddress() + src.readerIndex(), address + at, n);
        return at + n;
      }
      if (src.hasArray()) {
        PlatformDependent.copyMemory(
            src.array(), src.arrayOffset() + src.readerIndex(), address + at, n);
        return at + n;
      }
    }
    src.getBytes(src.readerIndex(), out, at, n);
    return at + n;
  }

  /** Copies {@code n} bytes between addresses: a few words for a small payload. */
  private static void copyMemory(long from, long to, int n) {
    if (n > WORD_COPY_LIMIT) {
      PlatformDependent.copyMemory(from, to, n);
      return;
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      PlatformDependent.putLong(to + i, PlatformDependent.getLong(from + i));
    }
    for (; i < n; i++) {
      PlatformDependent.putByte(to + i, PlatformDependent.getByte(from + i));
    }
  }
}
