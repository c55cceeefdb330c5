package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestResponseFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What WebSocket adds beyond carrying the suite: the checks on the upgrade request (path, origin,
 * subprotocol), messages fragmented into continuation frames, and text messages refused.
 */
class WebSocketTest {
  private final Servers servers = new Servers();

  @AfterEach
  void close() {
    servers.close();
  }

  private MillraceServer server(WebSocketOptions options) throws Exception {
    return servers.echo(
        MillraceServer.builder().listen("ws://127.0.0.1:0/rsocket").webSocket(options));
  }

  @Test
  void upgradeRequests_checkedForPathOriginAndUpgrade() throws Exception {
    MillraceServer server =
        server(WebSocketOptions.builder().allowedOrigins("https://app.example.com").build());
    int port = server.port();
    assertThat(upgrade(port, "/other", null)).startsWith("HTTP/1.1 404");
    assertThat(upgrade(port, "/rsocket", "https://evil.example.com")).startsWith("HTTP/1.1 403");
    assertThat(upgrade(port, "/rsocket", "https://APP.example.com")).startsWith("HTTP/1.1 101");
    assertThat(upgrade(port, "/rsocket", null)).as("not a browser").startsWith("HTTP/1.1 101");
    assertThat(upgrade(port, "/rsocket?token=1", null)).startsWith("HTTP/1.1 101");
    assertThat(plainGet(port, "/rsocket")).startsWith("HTTP/1.1 426");
  }

  @Test
  void subprotocols_whenTheServerNamesThem_theClientMustAskForOne() throws Exception {
    MillraceServer server = server(WebSocketOptions.builder().subprotocols("rsocket").build());
    String uri = "ws://127.0.0.1:" + server.port() + "/rsocket";
    assertThatThrownBy(
            () -> servers.client(MillraceClient.builder()).connect(uri).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    Connection connection =
        servers
            .client(
                MillraceClient.builder()
                    .webSocket(WebSocketOptions.builder().subprotocols("rsocket").build()))
            .connect(uri)
            .get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(connection, "chosen")).isEqualTo("chosen");
  }

  @Test
  void messageInContinuationFrames_reassembledIntoOneFrame() throws Exception {
    MillraceServer server = server(WebSocketOptions.DEFAULT);
    try (NettyRawPeer raw =
        NettyRawPeer.open(server.listeners().get(0), IoKind.preferred(), null)) {
      raw.send(setup());
      ByteBuf data = TransportSuite.utf8("x".repeat(10_000));
      raw.sendFragmented(
          RequestResponseFrame.encode(ByteBufAllocator.DEFAULT, 0, 1, false, null, data), 7);
      data.release();
      ByteBuf answer = raw.read(Duration.ofSeconds(5));
      try {
        assertThat(FrameHeader.type(answer)).isEqualTo(FrameType.PAYLOAD);
        assertThat(PayloadFrame.data(answer).toString(StandardCharsets.UTF_8))
            .isEqualTo("x".repeat(10_000));
      } finally {
        answer.release();
      }
    }
  }

  @Test
  void fragmentsLongerTogetherThanTheFrameLimit_connectionError() throws Exception {
    MillraceServer server =
        servers.echo(
            MillraceServer.builder()
                .listen("ws://127.0.0.1:0/rsocket")
                .config(ConnectionConfig.builder().maxFrameLength(64 * 1024).build()));
    try (NettyRawPeer raw =
        NettyRawPeer.open(server.listeners().get(0), IoKind.preferred(), null)) {
      raw.send(setup());
      ByteBuf data = TransportSuite.utf8("y".repeat(100_000));
      raw.sendFragmented(
          RequestResponseFrame.encode(ByteBufAllocator.DEFAULT, 0, 1, false, null, data), 4);
      data.release();
      assertError(raw, ErrorCode.CONNECTION_ERROR);
    }
  }

  @Test
  void textMessage_closesTheConnection() throws Exception {
    MillraceServer server = server(WebSocketOptions.DEFAULT);
    try (NettyRawPeer raw =
        NettyRawPeer.open(server.listeners().get(0), IoKind.preferred(), null)) {
      raw.send(setup());
      raw.sendText("hello");
      assertThat(raw.read(Duration.ofSeconds(5))).as("closed").isNull();
    }
  }

  static void assertError(NettyRawPeer raw, int code) throws Exception {
    ByteBuf frame = raw.read(Duration.ofSeconds(5));
    assertThat(frame).as("an ERROR before the close").isNotNull();
    try {
      assertThat(FrameHeader.type(frame)).isEqualTo(FrameType.ERROR);
      assertThat(frame.getInt(frame.readerIndex() + FrameHeader.SIZE)).isEqualTo(code);
    } finally {
      frame.release();
    }
  }

  static ByteBuf setup() {
    return SetupFrame.encode(
        ByteBufAllocator.DEFAULT, 0, false, 30_000, 90_000, null, "a/b", "c/d", null, null);
  }

  /** An upgrade request on a raw socket: the status line of the answer. */
  private static String upgrade(int port, String path, String origin) throws Exception {
    return request(
        port,
        "GET "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (origin == null ? "" : "Origin: " + origin + "\r\n")
            + "\r\n");
  }

  private static String plainGet(int port, String path) throws Exception {
    return request(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  }

  private static String request(int port, String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
          .readLine();
    }
  }
}
