package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the server does with the WebSocket frames a client sends, byte by byte on a plain socket (a
 * WebSocket library would answer pings and mask frames itself): pings are answered with a pong of
 * the same body; a frame that breaks RFC 6455 (unmasked, reserved bits, an unknown opcode, a long
 * or fragmented control frame, a continuation with no message) gets a Close with 1002 and the
 * connection ends, while the server goes on serving others.
 */
class WebSocketInboundRulesTest {
  private static final int FIN = 0x80;
  private static final int CONTINUATION = 0x0;
  private static final int BINARY = 0x2;
  private static final int CLOSE = 0x8;
  private static final int PING = 0x9;
  private static final int PONG = 0xA;

  private final Servers servers = new Servers();
  private int port;

  @BeforeEach
  void start() throws Exception {
    port = servers.echo(MillraceServer.builder().listen("ws://127.0.0.1:0/rsocket")).port();
  }

  @AfterEach
  void close() {
    servers.close();
  }

  @Test
  void aPingIsAnsweredWithAPongOfTheSameBody() throws Exception {
    try (Socket socket = upgraded()) {
      send(socket, FIN | PING, "are you there".getBytes(StandardCharsets.US_ASCII), true);
      Frame pong = read(socket);
      assertThat(pong.opcode).isEqualTo(PONG);
      assertThat(pong.fin).isTrue();
      assertThat(new String(pong.body, StandardCharsets.US_ASCII)).isEqualTo("are you there");
    }
  }

  @Test
  void anUnmaskedFrameFromAClient_closes1002() throws Exception {
    assertProtocolError(FIN | BINARY, new byte[] {0, 0, 0}, false);
  }

  @Test
  void reservedBits_close1002() throws Exception {
    assertProtocolError(FIN | 0x40 | BINARY, new byte[] {0, 0, 0}, true);
  }

  @Test
  void anUnknownOpcode_closes1002() throws Exception {
    assertProtocolError(FIN | 0x3, new byte[] {1}, true);
  }

  @Test
  void aControlFrameLongerThan125Bytes_closes1002() throws Exception {
    assertProtocolError(FIN | PING, new byte[126], true);
  }

  @Test
  void aFragmentedControlFrame_closes1002() throws Exception {
    assertProtocolError(PING, new byte[] {1}, true);
  }

  @Test
  void aContinuationWithNoMessageBeforeIt_closes1002() throws Exception {
    assertProtocolError(FIN | CONTINUATION, new byte[] {1, 2}, true);
  }

  private void assertProtocolError(int b0, byte[] body, boolean masked) throws Exception {
    try (Socket socket = upgraded()) {
      send(socket, b0, body, masked);
      Frame close = read(socket);
      assertThat(close.opcode).as("a Close").isEqualTo(CLOSE);
      assertThat(((close.body[0] & 0xff) << 8) | (close.body[1] & 0xff)).isEqualTo(1002);
      assertThat(endOfStream(socket)).as("then the connection ends").isTrue();
    }
    // the server serves the next client as before
    Connection next =
        servers
            .client(MillraceClient.builder())
            .connect("ws://127.0.0.1:" + port + "/rsocket")
            .get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(next, "still serving")).isEqualTo("still serving");
  }

  private Socket upgraded() throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(5000);
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET /rsocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("closed during the upgrade: " + head);
      }
      head.write(b);
    }
    assertThat(head.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 101");
    return socket;
  }

  /** One frame as a client writes it: masked (with a fixed key) unless told otherwise. */
  private static void send(Socket socket, int b0, byte[] body, boolean masked) throws IOException {
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    frame.write(b0);
    int maskBit = masked ? 0x80 : 0;
    if (body.length < 126) {
      frame.write(maskBit | body.length);
    } else {
      frame.write(maskBit | 126);
      frame.write(body.length >> 8);
      frame.write(body.length & 0xff);
    }
    byte[] key = {0x11, 0x22, 0x33, 0x44};
    if (masked) {
      frame.write(key);
    }
    for (int i = 0; i < body.length; i++) {
      frame.write(masked ? body[i] ^ key[i & 3] : body[i]);
    }
    socket.getOutputStream().write(frame.toByteArray());
    socket.getOutputStream().flush();
  }

  private record Frame(boolean fin, int opcode, byte[] body) {}

  /** One frame as the server writes it (never masked). */
  private static Frame read(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    int b0 = in.readUnsignedByte();
    int b1 = in.readUnsignedByte();
    assertThat(b1 & 0x80).as("a server does not mask").isZero();
    long length = b1 & 0x7f;
    if (length == 126) {
      length = in.readUnsignedShort();
    } else if (length == 127) {
      length = in.readLong();
    }
    byte[] body = new byte[(int) length];
    in.readFully(body);
    return new Frame((b0 & FIN) != 0, b0 & 0x0f, body);
  }

  private static boolean endOfStream(Socket socket) throws IOException {
    try {
      return socket.getInputStream().read() == -1;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }
}
