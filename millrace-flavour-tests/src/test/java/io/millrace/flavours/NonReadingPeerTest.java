package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.frame.RequestStreamFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every Millrace responder flavour against a peer that asks for a stream with unbounded credit and
 * never reads: the responder is held back once the connection stops being writable, so what it
 * emits stops growing at about what the socket buffers hold, instead of queueing in memory (the
 * core's own responder is held to this in the transport suite). Here, session 44: 8,720 to 8,897
 * payloads of 512 bytes in each flavour (about 4.5 MB, the two sockets' buffers), then none.
 */
class NonReadingPeerTest {
  private final Probe probe = new Probe();
  private Server server;

  @AfterEach
  void close() {
    if (server != null) {
      server.close();
    }
  }

  private static void send(OutputStream out, ByteBuf frame) throws Exception {
    try {
      int n = frame.readableBytes();
      out.write(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
      byte[] bytes = new byte[n];
      frame.readBytes(bytes);
      out.write(bytes);
      out.flush();
    } finally {
      frame.release();
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = FlavourSuiteTest.Side.class,
      names = {"STREAMS", "REACTOR", "RXJAVA", "MUTINY", "OBSERVER"})
  void aPeerThatAsksForEverythingAndNeverReads_holdsTheResponderBack(FlavourSuiteTest.Side side)
      throws Exception {
    server = side.start(probe);
    try (Socket raw = new Socket()) {
      raw.setReceiveBufferSize(64 * 1024);
      raw.connect(new InetSocketAddress(Server.HOST, server.port()), 10_000);
      OutputStream out = raw.getOutputStream();
      send(
          out,
          SetupFrame.encode(
              ByteBufAllocator.DEFAULT, 0, false, 30_000, 90_000, null, "a/b", "c/d", null, null));
      ByteBuf request =
          Unpooled.copiedBuffer("1000000000:512", StandardCharsets.UTF_8); // 512-byte payloads
      send(
          out,
          RequestStreamFrame.encode(
              ByteBufAllocator.DEFAULT, 0, 1, false, Integer.MAX_VALUE, null, request));
      request.release();
      // Steady: no more emitted for a second (the socket buffers are full and nothing is read).
      long last = -1;
      long steadySince = System.nanoTime();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline) {
        long now = probe.emitted.get();
        if (now != last) {
          last = now;
          steadySince = System.nanoTime();
        } else if (now > 0 && System.nanoTime() - steadySince > TimeUnit.SECONDS.toNanos(1)) {
          break;
        }
        Thread.sleep(50);
      }
      assertThat(probe.emitted.get())
          .as("payloads emitted to a peer that reads none (the buffers hold about 9,000)")
          .isPositive()
          .isLessThan(100_000);
      assertThat(probe.cancelled.getCount()).as("held back, not cancelled").isOne();
      // And the server still answers another connection.
      try (Client other = Client.Flavour.REACTOR.connect(server.port())) {
        assertThat(
                reactor.core.publisher.Mono.from(
                        other.requestResponse(io.millrace.streams.Payload.of("still here")))
                    .block(Server.TIMEOUT)
                    .dataUtf8())
            .isEqualTo("still here");
      }
    }
  }
}
