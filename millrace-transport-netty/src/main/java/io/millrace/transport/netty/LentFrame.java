package io.millrace.transport.netty;

import io.millrace.frame.LentFrameBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.WrappedByteBuf;

/**
 * The receive buffer as the engine sees one frame of it: the handler sets the buffer's reader and
 * writer index around the frame, hands this view over, and puts the indices back when the engine
 * returns. One view serves every frame of a receive buffer, so a frame costs no object and no
 * reference-count update (a retained slice per frame cost 40 bytes and two atomic operations). The
 * metadata of a request or PAYLOAD is lent the same way ({@link #lendSlice}): one view over a
 * duplicate of the receive buffer, moved to each frame's metadata.
 *
 * <p>What the engine lends on from here is valid for the callback only. Because the view is the
 * receive buffer itself, positioned at one frame for a moment, keeping it by {@code retain()} would
 * keep a buffer whose indices move on: {@code retain} and {@code release} throw, and the way to
 * keep a frame's bytes is a view of its own ({@code retainedSlice()}, {@code retainedDuplicate()})
 * or a copy. Slices and duplicates taken from it hold the receive buffer's memory as before (the
 * handler does not discard read bytes while one is held).
 */
final class LentFrame extends WrappedByteBuf implements LentFrameBuffer {
  /**
   * The view {@link #lendSlice} moves from frame to frame; made at the first frame with metadata.
   */
  private LentFrame metadata;

  LentFrame(ByteBuf receiveBuffer) {
    super(receiveBuffer);
  }

  @Override
  public ByteBuf lendSlice(int index, int length) {
    LentFrame view = metadata;
    if (view == null) {
      view = metadata = new LentFrame(buf.duplicate());
    }
    view.buf.setIndex(index, index + length);
    return view;
  }

  /** Whether this is the view of {@code receiveBuffer}. */
  boolean views(ByteBuf receiveBuffer) {
    return buf == receiveBuffer;
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

  private static IllegalStateException notOwned() {
    return new IllegalStateException(
        "a received payload is lent for the duration of the callback: keep it with"
            + " retainedSlice() (or copy it), not retain()");
  }
}
