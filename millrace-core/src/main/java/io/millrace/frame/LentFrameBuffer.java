package io.millrace.frame;

import io.netty.buffer.ByteBuf;

/**
 * A frame buffer lent by a transport that cuts frames out of its receive buffer without an object
 * per frame: {@link FrameReader} takes the metadata of a request or PAYLOAD from it through {@link
 * #lendSlice} instead of {@code slice}, so that a frame with metadata costs no object either.
 *
 * <p>The view returned is reused for the next frame: it is valid while the frame's callback runs,
 * like the frame itself, and keeping it takes {@code retainedSlice()} or a copy.
 */
public interface LentFrameBuffer {

  /**
   * A view of {@code length} bytes of this buffer from absolute {@code index}, valid until the next
   * call; one view per frame is all {@link FrameReader} asks for.
   */
  ByteBuf lendSlice(int index, int length);

  /**
   * The memory address of index 0 of this buffer, or 0 when the transport does not give one. It is
   * read without the reference-count checks of {@code memoryAddress()} (the buffer is live while it
   * is lent), which a copy of a received payload's bytes would otherwise pay on every frame: three
   * checks of a pooled receive buffer, eight call levels deep, below a reactive consumer's own.
   */
  default long lentAddress() {
    return 0;
  }
}
