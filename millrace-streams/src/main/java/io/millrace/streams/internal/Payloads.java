package io.millrace.streams.internal;

import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** Conversions between the engine's borrowed buffers and errors, and the streams' types. */
public final class Payloads {
  private Payloads() {}

  /**
   * A payload the receiver owns, from buffers the engine lends for the duration of a callback: heap
   * copies, or retained views when {@code zeroCopy}.
   */
  public static Payload received(ByteBuf metadata, ByteBuf data, boolean zeroCopy) {
    if (zeroCopy) {
      return Payload.of(metadata == null ? null : metadata.retainedSlice(), data.retainedSlice());
    }
    return Payload.of(metadata == null ? null : heapCopy(metadata), heapCopy(data));
  }

  private static ByteBuf heapCopy(ByteBuf b) {
    int n = b.readableBytes();
    if (n == 0) {
      return Unpooled.EMPTY_BUFFER;
    }
    byte[] bytes = new byte[n];
    b.getBytes(b.readerIndex(), bytes);
    return Unpooled.wrappedBuffer(bytes);
  }

  /**
   * The code an ERROR frame carries for {@code t}: a {@link StreamErrorException}'s own code when
   * it is one a stream may carry, APPLICATION_ERROR otherwise.
   */
  public static int errorCode(Throwable t) {
    if (t instanceof StreamErrorException) {
      int code = ((StreamErrorException) t).errorCode();
      if (code == ErrorCode.APPLICATION_ERROR
          || code == ErrorCode.REJECTED
          || code == ErrorCode.CANCELED
          || code == ErrorCode.INVALID
          || Integer.compareUnsigned(code, ErrorCode.MIN_USER_ALLOWED) >= 0
              && Integer.compareUnsigned(code, ErrorCode.MAX_USER_ALLOWED) <= 0) {
        return code;
      }
    }
    return ErrorCode.APPLICATION_ERROR;
  }

  /** The message an ERROR frame carries for {@code t}. */
  public static String errorMessage(Throwable t) {
    String m = t.getMessage();
    return m != null ? m : t.getClass().getName();
  }
}
