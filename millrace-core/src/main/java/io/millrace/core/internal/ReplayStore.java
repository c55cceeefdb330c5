package io.millrace.core.internal;

import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;

/**
 * The frames of a resumable connection that the peer has not confirmed, in the order they were
 * written, so that they can be written again on the next connection.
 *
 * <p>Positions, as RSocket 1.0 defines them: the bytes of every resumable frame (stream id not 0),
 * after fragmentation, without the transport's length prefix, counted from the start of the
 * session. The store holds the frames between {@link #firstAvailable()} and {@link #end()}; the
 * peer's confirmations ({@link #release}) drop whole entries from the front, never a frame the peer
 * has not confirmed, however full the store is: when it is full the session holds senders back
 * instead (see {@link ResumableSession}).
 *
 * <p>Entries are the buffers the transport was given, kept by reference (a retained duplicate, no
 * copy): a batch of frames each with its 3-byte length prefix, or one frame with the transport's
 * headroom in front. A batch is dropped when its last frame is confirmed, so the store may hold up
 * to one batch (64 KiB) more than strictly needed. {@link #bytes()} counts what the entries hold,
 * prefixes and headroom included. Event loop only, but for {@link #bytes()}, which other threads
 * read as an estimate (a caller's hand-off, through {@code ResumableSession.queuedBytes}).
 */
final class ReplayStore {
  /** An entry's kind: frames each with a 3-byte length prefix (for writeFrames). */
  static final byte BATCH = 0;

  /** An entry's kind: one frame with the transport's headroom in front (for write). */
  static final byte SINGLE = 1;

  private ByteBuf[] buffers = new ByteBuf[16];
  private long[] starts = new long[16];
  private byte[] kinds = new byte[16];
  private int[] counts = new int[16];
  private int head;
  private int size;
  private long firstAvailable;
  private long end;
  private long bytes;

  /** What each entry's bytes are reported to (the server-wide budget); may be null. */
  private final ResumeBudget budget;

  ReplayStore(ResumeBudget budget) {
    this.budget = budget;
  }

  /** The position of the first byte still held (the end when empty). */
  long firstAvailable() {
    return firstAvailable;
  }

  /** The position after the last frame written: this side's sent position. */
  long end() {
    return end;
  }

  /** Bytes held, length prefixes and headroom included. */
  long bytes() {
    return bytes;
  }

  int entries() {
    return size;
  }

  /**
   * Keeps {@code frames} (ownership taken): {@code frameCount} resumable frames, each preceded by
   * its 3-byte length prefix.
   */
  void addBatch(ByteBuf frames, int frameCount) {
    add(
        frames,
        BATCH,
        frameCount,
        frames.readableBytes() - (long) frameCount * FrameHeader.LENGTH_PREFIX_SIZE);
  }

  /** Keeps {@code frame} (ownership taken): one resumable frame after {@code headroom} bytes. */
  void addSingle(ByteBuf frame, int headroom) {
    add(frame, SINGLE, 1, frame.readableBytes() - headroom);
  }

  private void add(ByteBuf buf, byte kind, int frameCount, long positionBytes) {
    if (size == buffers.length) {
      grow();
    }
    int i = (head + size) & (buffers.length - 1);
    buffers[i] = buf;
    starts[i] = end;
    kinds[i] = kind;
    counts[i] = frameCount;
    size++;
    end += positionBytes;
    int held = buf.readableBytes();
    bytes += held;
    if (budget != null) {
      budget.add(held);
    }
  }

  private void grow() {
    int n = buffers.length;
    ByteBuf[] b = new ByteBuf[n * 2];
    long[] s = new long[n * 2];
    byte[] k = new byte[n * 2];
    int[] c = new int[n * 2];
    for (int j = 0; j < size; j++) {
      int i = (head + j) & (n - 1);
      b[j] = buffers[i];
      s[j] = starts[i];
      k[j] = kinds[i];
      c[j] = counts[i];
    }
    buffers = b;
    starts = s;
    kinds = k;
    counts = c;
    head = 0;
  }

  /**
   * The peer confirmed every frame before {@code position}: entries wholly before it are dropped.
   * Positions outside {@code [firstAvailable, end]} are the caller's to reject.
   */
  void release(long position) {
    while (size > 0) {
      int next = size > 1 ? (head + 1) & (buffers.length - 1) : -1;
      long entryEnd = next >= 0 ? starts[next] : end;
      if (entryEnd > position) {
        break;
      }
      dropHead();
    }
    firstAvailable = size == 0 ? end : starts[head];
  }

  private void dropHead() {
    ByteBuf b = buffers[head];
    buffers[head] = null;
    head = (head + 1) & (buffers.length - 1);
    size--;
    int held = b.readableBytes();
    bytes -= held;
    if (budget != null) {
      budget.release(held);
    }
    b.release();
  }

  /** What {@link #replay} writes to. */
  interface Sink {
    void writeFrames(ByteBuf frames, int frameCount);

    void write(ByteBuf frame);
  }

  /**
   * Writes every frame from {@code position} on to {@code sink}, in order, as retained views (the
   * store keeps its entries until they are confirmed). Returns false, writing nothing, when {@code
   * position} is not the start of a held frame.
   */
  boolean replay(long position, Sink sink) {
    if (position < firstAvailable || position > end) {
      return false;
    }
    int mask = buffers.length - 1;
    int first = -1;
    int offset = 0;
    int skipped = 0;
    for (int j = 0; j < size && first < 0; j++) {
      int i = (head + j) & mask;
      long start = starts[i];
      long entryEnd = j + 1 < size ? starts[(i + 1) & mask] : end;
      if (position >= entryEnd) {
        continue;
      }
      if (position == start) {
        first = j;
      } else if (kinds[i] == BATCH) {
        ByteBuf b = buffers[i];
        int index = b.readerIndex();
        long at = start;
        while (at < position) {
          int length = b.getUnsignedMedium(index);
          index += FrameHeader.LENGTH_PREFIX_SIZE + length;
          at += length;
          skipped++;
        }
        if (at != position) {
          return false;
        }
        first = j;
        offset = index - b.readerIndex();
      } else {
        return false; // inside a single frame
      }
    }
    if (first < 0) {
      return position == end;
    }
    if (sink == null) {
      return true; // only asked whether it can
    }
    for (int j = first; j < size; j++) {
      int i = (head + j) & mask;
      ByteBuf b = buffers[i];
      if (kinds[i] == BATCH) {
        int from = j == first ? offset : 0;
        int frames = counts[i] - (j == first ? skipped : 0);
        sink.writeFrames(b.retainedSlice(b.readerIndex() + from, b.readableBytes() - from), frames);
      } else {
        sink.write(b.retainedDuplicate());
      }
    }
    return true;
  }

  /** Whether a replay from {@code position} can start there: a held frame's start, or the end. */
  boolean isBoundary(long position) {
    return replay(position, null);
  }

  /** Drops everything (the session ended). */
  void clear() {
    while (size > 0) {
      dropHead();
    }
    firstAvailable = end;
  }
}
