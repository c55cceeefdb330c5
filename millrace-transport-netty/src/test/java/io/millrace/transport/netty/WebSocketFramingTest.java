package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Millrace's WebSocket framing, read back by Netty's own RFC 6455 decoder: every length form,
 * masked (a client's frames) and not (a server's), and control frames.
 */
class WebSocketFramingTest {

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 7, 8, 125, 126, 127, 65_535, 65_536, 100_000})
  void dataFrames_readBackByNettysDecoder_maskedAndNot(int length) {
    byte[] payload = new byte[length];
    new Random(length).nextBytes(payload);
    for (boolean masked : new boolean[] {false, true}) {
      int headroom = masked ? WebSocketFraming.CLIENT_HEADROOM : WebSocketFraming.SERVER_HEADROOM;
      ByteBuf frame = Unpooled.buffer(headroom + length);
      frame.writerIndex(headroom).writeBytes(payload);
      ByteBuf wire;
      if (masked) {
        wire = Unpooled.buffer();
        WebSocketFraming.writeMasked(frame, headroom, WebSocketFraming.OPCODE_BINARY, wire);
        assertThat(ByteBufUtil.getBytes(frame, headroom, length))
            .as("the frame's own payload, which others may share, is left as it was")
            .isEqualTo(payload);
        frame.release();
      } else {
        WebSocketFraming.frame(frame, headroom, WebSocketFraming.OPCODE_BINARY);
        assertThat(
                ByteBufUtil.getBytes(
                    frame, frame.readerIndex() + frame.readableBytes() - length, length))
            .isEqualTo(payload);
        wire = frame;
      }
      assertThat(wire.readableBytes())
          .isEqualTo(WebSocketFraming.headerLength(length, masked) + length);
      WebSocketFrame decoded = decode(wire, masked);
      try {
        assertThat(decoded).isInstanceOf(BinaryWebSocketFrame.class);
        assertThat(decoded.isFinalFragment()).isTrue();
        assertThat(ByteBufUtil.getBytes(decoded.content())).isEqualTo(payload);
      } finally {
        decoded.release();
      }
    }
  }

  @ParameterizedTest
  @CsvSource({
    "0,heap",
    "1,heap",
    "3,heap",
    "4,heap",
    "5,heap",
    "9,heap",
    "17,heap",
    "70001,heap",
    "17,direct",
    "23,direct",
    "70001,direct",
    "17,composite",
    "70001,composite"
  })
  void mask_twiceIsTheIdentity_atAnyOffsetAndLength(int length, String kind) {
    byte[] payload = new byte[length];
    new Random(7).nextBytes(payload);
    ByteBuf buf =
        switch (kind) {
          case "heap" -> Unpooled.buffer(length + 3);
          case "direct" -> Unpooled.directBuffer(length + 3);
          default -> // two blocks: the masked range spans both
              Unpooled.compositeBuffer()
                  .addComponent(true, Unpooled.buffer(3 + length / 2).writeZero(3 + length / 2))
                  .addComponent(
                      true,
                      Unpooled.directBuffer(length - length / 2).writeZero(length - length / 2))
                  .clear();
        };
    buf.writeZero(3).writeBytes(payload);
    WebSocketFraming.mask(buf, 3, length, 0x12345678);
    if (kind.equals("composite")) {
      assertThat(buf.nioBufferCount()).as("the range spans two blocks").isEqualTo(2);
    }
    for (int i = 0; i < length; i++) {
      int keyByte = 0x12345678 >>> (24 - 8 * (i & 3)) & 0xFF;
      assertThat(buf.getByte(3 + i) & 0xFF).isEqualTo((payload[i] ^ keyByte) & 0xFF);
    }
    WebSocketFraming.mask(buf, 3, length, 0x12345678);
    assertThat(ByteBufUtil.getBytes(buf, 3, length)).isEqualTo(payload);
    buf.release();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void controlFrames_carryTheirPayload(boolean masked) {
    ByteBuf payload = Unpooled.wrappedBuffer(new byte[] {1, 2, 3});
    ByteBuf pong =
        WebSocketFraming.control(
            ByteBufAllocator.DEFAULT, WebSocketFraming.OPCODE_PONG, payload, masked);
    WebSocketFrame decoded = decode(pong, masked);
    try {
      assertThat(decoded).isInstanceOf(PongWebSocketFrame.class);
      assertThat(ByteBufUtil.getBytes(decoded.content())).containsExactly(1, 2, 3);
      assertThat(payload.readableBytes()).as("the payload is not consumed").isEqualTo(3);
    } finally {
      decoded.release();
    }
  }

  private static WebSocketFrame decode(ByteBuf frame, boolean masked) {
    EmbeddedChannel channel =
        new EmbeddedChannel(
            new WebSocket13FrameDecoder(
                WebSocketDecoderConfig.newBuilder()
                    .expectMaskedFrames(masked)
                    .maxFramePayloadLength(1 << 20)
                    .build()));
    assertThat(channel.writeInbound(frame)).isTrue();
    WebSocketFrame decoded = channel.readInbound();
    assertThat(channel.finish()).isFalse();
    return decoded;
  }
}
