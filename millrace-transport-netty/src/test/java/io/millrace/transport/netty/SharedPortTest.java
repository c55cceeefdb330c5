package io.millrace.transport.netty;

import static io.millrace.testing.TestCertificates.path;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestResponseFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One port, several protocols: RSocket over TCP and RSocket over WebSocket on the same tcp (and
 * tls) port, told apart by their first bytes, or under TLS by ALPN when the client chose a
 * protocol; HTTP/2 closed where no gRPC endpoint takes it.
 */
class SharedPortTest {
  private static final byte[] HTTP2_PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Servers servers = new Servers();

  @AfterEach
  void close() {
    servers.close();
  }

  @Test
  void tcpPort_servesRSocketAndWebSocket() throws Exception {
    MillraceServer server = servers.echo(MillraceServer.builder().listen("tcp://127.0.0.1:0"));
    MillraceClient client = servers.client(MillraceClient.builder());
    int port = server.port();
    Connection tcp = client.connect("tcp://127.0.0.1:" + port).get(5, TimeUnit.SECONDS);
    Connection ws = client.connect("ws://127.0.0.1:" + port + "/rsocket").get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(tcp, "over tcp")).isEqualTo("over tcp");
    assertThat(Servers.echo(ws, "over ws")).isEqualTo("over ws");
  }

  @Test
  void webSocketOnTheSharedPort_usesTheWebSocketListenersPath() throws Exception {
    MillraceServer server =
        servers.echo(
            MillraceServer.builder().listen("tcp://127.0.0.1:0").listen("ws://127.0.0.1:0/feed"));
    Connection ws =
        servers
            .client(MillraceClient.builder())
            .connect("ws://127.0.0.1:" + server.port() + "/feed")
            .get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(ws, "same path")).isEqualTo("same path");
    Connection dedicated =
        servers
            .client(MillraceClient.builder())
            .connect(server.listener(TransportUri.Scheme.WS).toString())
            .get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(dedicated, "own port")).isEqualTo("own port");
  }

  @Test
  void tlsPort_servesRSocketAndSecureWebSocket() throws Exception {
    MillraceServer server =
        servers.echo(
            MillraceServer.builder()
                .listen("tls://127.0.0.1:0")
                .tls(ServerTls.builder(path("server.pem"), path("server.key")).build()));
    MillraceClient client =
        servers.client(
            MillraceClient.builder().tls(ClientTls.builder().trust(path("ca.pem")).build()));
    int port = server.port();
    Connection tls = client.connect("tls://localhost:" + port).get(5, TimeUnit.SECONDS);
    Connection wss =
        client.connect("wss://localhost:" + port + "/rsocket").get(5, TimeUnit.SECONDS);
    assertThat(Servers.echo(tls, "over tls")).isEqualTo("over tls");
    assertThat(Servers.echo(wss, "over wss")).isEqualTo("over wss");
  }

  @Test
  void http2WithoutAGrpcEndpoint_closed() throws Exception {
    MillraceServer server = servers.echo(MillraceServer.builder().listen("tcp://127.0.0.1:0"));
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write(HTTP2_PREFACE);
      out.flush();
      InputStream in = socket.getInputStream();
      assertThat(in.read()).as("end of stream").isEqualTo(-1);
    }
  }

  @Test
  void underTls_alpnH2_goesToTheHttp2EndpointWhateverItsFirstBytes() throws Exception {
    CompletableFuture<Boolean> handedOver = new CompletableFuture<>();
    int port = tlsPortWithHttp2(channel -> handedOver.complete(true));
    try (SSLSocket socket = alpnSocket(port, "h2")) {
      socket.getOutputStream().write(upgradeRequest());
      socket.getOutputStream().flush();
      assertThat(handedOver.get(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void underTls_alpnHttp11_isServedAsHttp11EvenWhenItOpensLikeHttp2() throws Exception {
    CompletableFuture<Boolean> handedOver = new CompletableFuture<>();
    int port = tlsPortWithHttp2(channel -> handedOver.complete(true));
    try (SSLSocket socket = alpnSocket(port, "http/1.1")) {
      socket.getOutputStream().write(HTTP2_PREFACE);
      socket.getOutputStream().flush();
      byte[] head = socket.getInputStream().readNBytes(10);
      assertThat(new String(head, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 4");
    }
    assertThat(handedOver).isNotDone();
  }

  @Test
  void underTlsWithoutAlpn_theFirstBytesDecide() throws Exception {
    CompletableFuture<Boolean> handedOver = new CompletableFuture<>();
    int port = tlsPortWithHttp2(channel -> handedOver.complete(true));
    try (SSLSocket socket = alpnSocket(port, null)) {
      socket.getOutputStream().write(HTTP2_PREFACE);
      socket.getOutputStream().flush();
      assertThat(handedOver.get(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void underTls_aClientThatOffersAlpnButSpeaksRSocket_isServedAsRSocket() throws Exception {
    CompletableFuture<Boolean> handedOver = new CompletableFuture<>();
    int port = tlsPortWithHttp2(channel -> handedOver.complete(true));
    for (String offered : new String[] {"http/1.1", "h2"}) {
      try (SSLSocket socket = alpnSocket(port, offered)) {
        OutputStream out = socket.getOutputStream();
        out.write(lengthPrefixed(WebSocketTest.setup()));
        ByteBuf data = TransportSuite.utf8("alpn " + offered);
        out.write(
            lengthPrefixed(
                RequestResponseFrame.encode(ByteBufAllocator.DEFAULT, 0, 1, false, null, data)));
        data.release();
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
        byte[] frame = new byte[length];
        in.readFully(frame);
        ByteBuf answer = Unpooled.wrappedBuffer(frame);
        assertThat(FrameHeader.type(answer)).as("answered as RSocket").isEqualTo(FrameType.PAYLOAD);
        assertThat(PayloadFrame.data(answer).toString(StandardCharsets.UTF_8))
            .isEqualTo("alpn " + offered);
      }
    }
    assertThat(handedOver).isNotDone();
  }

  /** A frame with RSocket's 3-byte length prefix, as TCP carries it (the frame is released). */
  private static byte[] lengthPrefixed(ByteBuf frame) {
    try {
      int length = frame.readableBytes();
      byte[] bytes = new byte[3 + length];
      bytes[0] = (byte) (length >> 16);
      bytes[1] = (byte) (length >> 8);
      bytes[2] = (byte) length;
      frame.getBytes(frame.readerIndex(), bytes, 3, length);
      return bytes;
    } finally {
      frame.release();
    }
  }

  private int tlsPortWithHttp2(Http2Handoff handoff) throws Exception {
    return servers
        .echo(
            MillraceServer.builder()
                .listen("tls://127.0.0.1:0")
                .tls(ServerTls.builder(path("server.pem"), path("server.key")).build())
                .http2Handoff(handoff))
        .port();
  }

  private static byte[] upgradeRequest() {
    return ("GET /rsocket HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** A TLS client socket offering {@code protocol} by ALPN (none when null), handshake done. */
  private static SSLSocket alpnSocket(int port, String protocol) throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new TrustingAnything()}, null);
    SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port);
    socket.setSoTimeout(5000);
    if (protocol != null) {
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setApplicationProtocols(new String[] {protocol});
      socket.setSSLParameters(parameters);
    }
    socket.startHandshake();
    assertThat(socket.getApplicationProtocol()).isEqualTo(protocol == null ? "" : protocol);
    return socket;
  }

  /** The tests check routing, not certificates (TlsTest does). */
  private static final class TrustingAnything implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
