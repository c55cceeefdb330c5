package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;

/**
 * ERROR (0x0B), on stream 0 for connection errors or on a stream to end it.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                          Error Code (u32)                     |
 * +---------------------------------------------------------------+
 * |                   Error Data (UTF-8 message)                  |
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class ErrorFrame {
  static final int CODE_OFFSET = FrameHeader.SIZE;
  static final int DATA_OFFSET = CODE_OFFSET + 4;

  private ErrorFrame() {}

  /** Encodes the frame with {@code message} (null means empty) as UTF-8. */
  public static ByteBuf encode(
      ByteBufAllocator alloc, int headroom, int streamId, int code, String message) {
    String text = message == null ? "" : message;
    ByteBuf out =
        Frames.start(
            alloc, headroom, 4 + ByteBufUtil.utf8MaxBytes(text), streamId, FrameType.ERROR, 0);
    out.writeInt(code);
    ByteBufUtil.writeUtf8(out, text);
    return out;
  }

  public static int errorCode(ByteBuf frame) {
    return frame.getInt(frame.readerIndex() + CODE_OFFSET);
  }

  /** The message, decoded from UTF-8 (malformed bytes become U+FFFD). */
  public static String message(ByteBuf frame) {
    int start = frame.readerIndex() + DATA_OFFSET;
    return frame.toString(start, frame.writerIndex() - start, StandardCharsets.UTF_8);
  }
}
