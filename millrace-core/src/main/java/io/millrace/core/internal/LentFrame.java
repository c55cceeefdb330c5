package io.millrace.core.internal;

import io.millrace.frame.LentFrameBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.WrappedByteBuf;

/**
 * A received frame as a transport lends it to the engine: a view of the buffer the frame is in,
 * valid until {@link TransportListener#onFrame} returns, that cannot be kept.
 *
 * <p>The length-prefixed transports (TCP, TLS, Unix sockets) set their receive buffer's reader and
 * writer index around one frame, hand over one view for every frame of that buffer, and put the
 * indices back after each: a frame costs no object and no reference-count update (a retained slice
 * per frame cost 40 bytes and two atomic operations). The metadata of a request or PAYLOAD is lent
 * the same way ({@link #lendSlice}): one view over a duplicate of the buffer, moved to each frame's
 * metadata. Transports that receive a buffer per frame (WebSocket messages, in-JVM) wrap it in a
 * view of its own, so that the rules below hold on every transport alike.
 *
 * <p>Keeping such a view by {@code retain()} would keep a buffer whose indices move on to the next
 * frame, and growing or compacting it would move the bytes of the frames after it: {@code retain},
 * {@code release}, {@code capacity(int)}, {@code ensureWritable} and the {@code discard} methods
 * throw IllegalStateException. The way to keep a frame's bytes is {@code retainedSlice()} (a view
 * of its own, bounded to them) or a copy. Writing through a view is not blocked here; a handler
 * that lends in place fails the connection when a callback wrote past its frame or past its
 * metadata ({@link #metadataWrittenPast}).
 */
public final class LentFrame extends WrappedByteBuf implements LentFrameBuffer {
  /**
   * The view {@link #lendSlice} moves from frame to frame; made at the first frame with metadata.
   */
  private LentFrame metadata;

  /** Where the metadata last lent ends ({@link #metadataWrittenPast}). */
  private int metadataEnd;

  /** The viewed buffer's memory address, as {@link #takeAddress} last read it; 0: none. */
  private long address;

  /** A view of {@code buffer}: of one frame, or of a receive buffer positioned at each in turn. */
  public LentFrame(ByteBuf buffer) {
    super(buffer);
  }

  /** Whether this is the view of {@code buffer}. */
  public boolean views(ByteBuf buffer) {
    return buf == buffer;
  }

  /**
   * Reads the viewed buffer's memory address for {@link #lentAddress}: a transport that lends the
   * frames of a receive buffer through this view calls it before each batch of them, since growing
   * the buffer between batches may move its memory (nothing can during a batch: the view refuses
   * it, and reads that arrive meanwhile wait for the batch to end).
   */
  public void takeAddress() {
    address = buf.hasMemoryAddress() ? buf.memoryAddress() : 0;
  }

  /**
   * Forgets the address when a batch of frames ends: a view read after its callback (a misuse) then
   * goes through {@code memoryAddress()}, which fails on a released buffer, instead of reading
   * memory that may have moved or been freed.
   */
  public void dropAddress() {
    address = 0;
    LentFrame view = metadata;
    if (view != null) {
      view.address = 0;
    }
  }

  @Override
  public long lentAddress() {
    return address;
  }

  @Override
  public ByteBuf lendSlice(int index, int length) {
    LentFrame view = metadata;
    if (view == null) {
      view = metadata = new LentFrame(buf.duplicate());
    }
    view.address = address; // the duplicate's memory is the buffer's
    view.buf.setIndex(index, index + length);
    metadataEnd = index + length;
    return view;
  }

  /**
   * Whether the metadata lent for the current frame was written past its end (into the data and the
   * frames after it): a transport that lends frames in place fails the connection then, as a slice
   * of the frame would have refused the write.
   */
  public boolean metadataWrittenPast() {
    LentFrame view = metadata;
    return view != null && view.buf.writerIndex() > metadataEnd;
  }

  @Override
  public ByteBuf retain() {
    throw notOwned();
  }

  @Override
  public ByteBuf retain(int increment) {
    throw notOwned();
  }

  @Override
  public boolean release() {
    throw notOwned();
  }

  @Override
  public boolean release(int decrement) {
    throw notOwned();
  }

  @Override
  public ByteBuf capacity(int newCapacity) {
    throw notResizable();
  }

  @Override
  public ByteBuf ensureWritable(int minWritableBytes) {
    throw notResizable();
  }

  @Override
  public int ensureWritable(int minWritableBytes, boolean force) {
    throw notResizable();
  }

  @Override
  public ByteBuf discardReadBytes() {
    throw notResizable();
  }

  @Override
  public ByteBuf discardSomeReadBytes() {
    throw notResizable();
  }

  private static IllegalStateException notOwned() {
    return new IllegalStateException(
        "a received payload is lent for the duration of the callback: keep it with"
            + " retainedSlice() (or copy it), not retain()");
  }

  private static IllegalStateException notResizable() {
    return new IllegalStateException(
        "a received payload is a view of the connection's receive buffer: read it, or copy it to"
            + " change it");
  }
}
