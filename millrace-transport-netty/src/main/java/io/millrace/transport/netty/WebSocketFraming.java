package io.millrace.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
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

  /** Headroom for a server's frames (never masked) and a client's (always masked). */
  static final int SERVER_HEADROOM = 10;

  static final int CLIENT_HEADROOM = MAX_HEADER;

  private WebSocketFraming() {}

  static int headerLength(int payloadLength, boolean masked) {
    int length = payloadLength < 126 ? 2 : payloadLength < 65_536 ? 4 : 10;
    return masked ? length + 4 : length;
  }

  /**
   * Frames the payload that follows {@code headroom} reserved bytes at {@code frame}'s reader index
   * as one final message of {@code opcode}: writes the header at the end of the headroom, masks the
   * payload in place when {@code masked}, and moves the reader index to the header.
   */
  static void frame(ByteBuf frame, int headroom, int opcode, boolean masked) {
    int payloadStart = frame.readerIndex() + headroom;
    int length = frame.writerIndex() - payloadStart;
    int header = headerLength(length, masked);
    int at = payloadStart - header;
    frame.setByte(at, 0x80 | opcode);
    int maskBit = masked ? 0x80 : 0;
    int i = at + 2;
    if (length < 126) {
      frame.setByte(at + 1, maskBit | length);
    } else if (length < 65_536) {
      frame.setByte(at + 1, maskBit | 126);
      frame.setShort(i, length);
      i += 2;
    } else {
      frame.setByte(at + 1, maskBit | 127);
      frame.setLong(i, length);
      i += 8;
    }
    if (masked) {
      int key = ThreadLocalRandom.current().nextInt();
      frame.setInt(i, key);
      mask(frame, payloadStart, length, key);
    }
    frame.readerIndex(at);
  }

  /** A control message ({@code payload} at most 125 bytes, not released). */
  static ByteBuf control(ByteBufAllocator alloc, int opcode, ByteBuf payload, boolean masked) {
    int headroom = masked ? CLIENT_HEADROOM : SERVER_HEADROOM;
    ByteBuf frame = alloc.buffer(headroom + payload.readableBytes());
    frame.writerIndex(headroom);
    frame.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
    frame(frame, headroom, opcode, masked);
    return frame;
  }

  /** XORs {@code length} bytes from {@code index} with the 4-byte key, in place. */
  static void mask(ByteBuf buf, int index, long length, int key) {
    int end = (int) (index + length);
    int i = index;
    long key8 = (key & 0xFFFFFFFFL) << 32 | (key & 0xFFFFFFFFL);
    for (; i + 8 <= end; i += 8) {
      buf.setLong(i, buf.getLong(i) ^ key8);
    }
    for (int k = 0; i < end; i++, k++) {
      buf.setByte(i, buf.getByte(i) ^ (key >>> (24 - 8 * (k & 3))));
    }
  }
}
