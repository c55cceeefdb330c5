package io.millrace.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ThreadLocalRandom;

/**
 * RFC 6455 frame headers, for the data phase of a WebSocket connection once Netty's handshake is
 * done. Millrace frames its RSocket frames itself instead of through Netty's WebSocket codec: the
 * header goes into the headroom every frame buffer reserves, so a frame is one buffer and one write
 * with no frame object around it, and inbound frames are cut from the read buffer as over TCP.
 * Netty's codec made RSocket over WebSocket about a fifth as fast as over TCP (see
 * docs/benchmarks.md, "Transports").
 */
final class WebSocketFraming {
  static final int OPCODE_CONTINUATION = 0x0;
  static final int OPCODE_TEXT = 0x1;
  static final int OPCODE_BINARY = 0x2;
  static final int OPCODE_CLOSE = 0x8;
  static final int OPCODE_PING = 0x9;
  static final int OPCODE_PONG = 0xA;

  /** The longest header: 2 bytes, a 64-bit length, a mask key. */
  static final int MAX_HEADER = 14;

  /**
   * Headroom for a server's frames, whose header is written in place, and a client's, which are
   * copied as they are masked.
   */
  static final int SERVER_HEADROOM = 10;

  static final int CLIENT_HEADROOM = 0;

  private WebSocketFraming() {}

  static int headerLength(int payloadLength, boolean masked) {
    int length = payloadLength < 126 ? 2 : payloadLength < 65_536 ? 4 : 10;
    return masked ? length + 4 : length;
  }

  /**
   * Frames, in place, the payload that follows {@code headroom} reserved bytes at {@code frame}'s
   * reader index as one final, unmasked message of {@code opcode} (a server's): writes the header
   * at the end of the headroom and moves the reader index to it. Only the headroom is written, so a
   * frame shared with a replay store or an application stays as it was.
   */
  static void frame(ByteBuf frame, int headroom, int opcode) {
    int payloadStart = frame.readerIndex() + headroom;
    int length = frame.writerIndex() - payloadStart;
    int at = payloadStart - headerLength(length, false);
    writeHeader(frame, at, opcode, length, false);
    frame.readerIndex(at);
  }

  /**
   * Writes the payload after {@code headroom} bytes of {@code frame} to {@code out} as one final,
   * masked message of {@code opcode} (a client's), with a fresh random key. {@code frame} is only
   * read: its payload may be shared (a replay store keeps it, an application may send one buffer to
   * several connections), so it is masked on the way into {@code out}.
   */
  static void writeMasked(ByteBuf frame, int headroom, int opcode, ByteBuf out) {
    int payloadStart = frame.readerIndex() + headroom;
    int length = frame.writerIndex() - payloadStart;
    int at = out.writerIndex();
    int header = headerLength(length, true);
    out.ensureWritable(header + length);
    int key = writeHeader(out, at, opcode, length, true);
    out.setBytes(at + header, frame, payloadStart, length);
    mask(out, at + header, length, key);
    out.writerIndex(at + header + length);
  }

  /** Writes a header at {@code at}; returns the mask key written (0 when not masked). */
  private static int writeHeader(ByteBuf buf, int at, int opcode, int length, boolean masked) {
    buf.setByte(at, 0x80 | opcode);
    int maskBit = masked ? 0x80 : 0;
    int i = at + 2;
    if (length < 126) {
      buf.setByte(at + 1, maskBit | length);
    } else if (length < 65_536) {
      buf.setByte(at + 1, maskBit | 126);
      buf.setShort(i, length);
      i += 2;
    } else {
      buf.setByte(at + 1, maskBit | 127);
      buf.setLong(i, length);
      i += 8;
    }
    if (!masked) {
      return 0;
    }
    int key = ThreadLocalRandom.current().nextInt();
    buf.setInt(i, key);
    return key;
  }

  /** A control message ({@code payload} at most 125 bytes, not released). */
  static ByteBuf control(ByteBufAllocator alloc, int opcode, ByteBuf payload, boolean masked) {
    int length = payload.readableBytes();
    ByteBuf frame = alloc.buffer(MAX_HEADER + length);
    frame.writerIndex(SERVER_HEADROOM);
    frame.writeBytes(payload, payload.readerIndex(), length);
    if (!masked) {
      frame(frame, SERVER_HEADROOM, opcode);
      return frame;
    }
    ByteBuf out = alloc.buffer(headerLength(length, true) + length);
    writeMasked(frame, SERVER_HEADROOM, opcode, out);
    frame.release();
    return out;
  }

  /**
   * XORs {@code length} bytes from {@code index} with the 4-byte key, in place. A buffer that is
   * one block of memory is masked through one NIO view of it: one checked access instead of one per
   * 8 bytes. That matters beyond the checks themselves: under Netty's paranoid leak detection every
   * access to a tracked buffer records a stack trace, and masking a 64 KiB message access by access
   * took milliseconds (the resumption tests over WebSocket ran at 2 % of their TCP speed).
   */
  static void mask(ByteBuf buf, int index, long length, int key) {
    int len = (int) length;
    long key8 = (key & 0xFFFFFFFFL) << 32 | (key & 0xFFFFFFFFL);
    if (len >= 16 && buf.nioBufferCount() == 1 && !buf.isReadOnly()) {
      // The buffer's own cached view (nioBuffer would make a ByteBuffer per message); it shares
      // the memory, its position..limit is the range, and its byte order is whatever it was left.
      ByteBuffer view = buf.internalNioBuffer(index, len);
      long k8 = view.order() == ByteOrder.BIG_ENDIAN ? key8 : Long.reverseBytes(key8);
      int i = view.position();
      int end = i + len;
      for (; i + 8 <= end; i += 8) {
        view.putLong(i, view.getLong(i) ^ k8);
      }
      for (int k = 0; i < end; i++, k++) {
        view.put(i, (byte) (view.get(i) ^ (key >>> (24 - 8 * (k & 3)))));
      }
      return;
    }
    int end = index + len;
    int i = index;
    for (; i + 8 <= end; i += 8) {
      buf.setLong(i, buf.getLong(i) ^ key8);
    }
    for (int k = 0; i < end; i++, k++) {
      buf.setByte(i, buf.getByte(i) ^ (key >>> (24 - 8 * (k & 3))));
    }
  }
}
