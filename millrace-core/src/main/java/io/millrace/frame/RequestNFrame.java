package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * REQUEST_N (0x08): grants the peer's sender n more payloads on a stream.
 *
 * <pre>
 * +-+-------------------------------------------------------------+
 * |0|                         Request N (u31, > 0)                |
 * +-+-------------------------------------------------------------+
 * </pre>
 */
public final class RequestNFrame {
  /** The largest n the wire can carry; by convention it means "unbounded". */
  public static final int MAX_REQUEST_N = Integer.MAX_VALUE;

  private RequestNFrame() {}

  /** Encodes the frame; n above 2^31-1 is written as 2^31-1 (unbounded). */
  public static ByteBuf encode(ByteBufAllocator alloc, int headroom, int streamId, long n) {
    int requestN = clamp(n); // validate before allocating, or an invalid n leaks the buffer
    ByteBuf out = Frames.start(alloc, headroom, 4, streamId, FrameType.REQUEST_N, 0);
    out.writeInt(requestN);
    return out;
  }

  /** n as sent: 0 to 2^31-1 (0 is invalid on the wire and rejected by the reader). */
  public static int requestN(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + FrameHeader.SIZE) & 0x7FFF_FFFF;
  }

  /** n as written: above 2^31-1 becomes 2^31-1 (unbounded); throws unless positive. */
  public static int clamp(long n) {
    if (n <= 0) {
      throw new IllegalArgumentException("request-n must be positive: " + n);
    }
    return n >= MAX_REQUEST_N ? MAX_REQUEST_N : (int) n;
  }
}
