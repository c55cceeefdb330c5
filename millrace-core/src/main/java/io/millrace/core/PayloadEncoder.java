package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Writes a value as a payload's data straight into the buffer of the outbound frame, so that a
 * message is encoded once, where it is sent from, instead of into a buffer of its own that is then
 * copied into the frame and released ({@link Stream#next(ByteBuf, Object, PayloadEncoder)}).
 *
 * <p>The value is encoded when the frame is written, on the connection's event loop, possibly later
 * than it was handed over: it must not change in between, nor depend on memory that its owner
 * reuses or frees meanwhile. Protobuf messages do not change; one that wraps a reused array or a
 * buffer ({@code UnsafeByteOperations.unsafeWrap}) is not safe to hand over this way.
 *
 * <p>{@link #encode} must write exactly {@link #length} bytes: fewer would send whatever the frame
 * buffer held there before.
 *
 * @param <T> the type of the values encoded
 */
public interface PayloadEncoder<T> {
  /**
   * Data up to this many bytes is written straight into the connection's frame batch; longer data
   * is encoded into a buffer of its own when it is sent (on the event loop), so a caller that can
   * encode it earlier on its own thread should do that instead.
   */
  int IN_FRAME_MAX_BYTES = 4096;

  /** The exact number of bytes {@link #encode} writes for {@code value}. */
  int length(T value);

  /**
   * Writes exactly {@code length} bytes (the value of {@link #length}) of {@code value} into {@code
   * out} from {@code index} on, with absolute writes: {@code out}'s indexes do not move, and the
   * room is there. A failure is thrown as an unchecked exception; the bytes written so far are then
   * not sent.
   */
  void encode(T value, ByteBuf out, int index, int length);

  /**
   * {@link #encode} into a frame batch whose memory starts at {@code address} (the address of
   * {@code out}'s index 0, or 0 when it has none): the connection's frame writer calls this one. An
   * encoder that writes raw memory writes at {@code address + index} instead of asking {@code out}
   * for its address, which Netty answers through three reference-count checks eight call levels
   * deep, on every frame. By default, {@link #encode}.
   */
  default void encodeAt(T value, ByteBuf out, long address, int index, int length) {
    encode(value, out, index, length);
  }

  /** {@code value} encoded into a new buffer from {@code alloc} (the caller owns it). */
  default ByteBuf toBuffer(T value, ByteBufAllocator alloc) {
    int length = length(value);
    ByteBuf buf = alloc.buffer(length, length);
    try {
      encode(value, buf, 0, length);
      buf.writerIndex(length);
      return buf;
    } catch (Throwable e) {
      buf.release();
      throw e;
    }
  }
}
