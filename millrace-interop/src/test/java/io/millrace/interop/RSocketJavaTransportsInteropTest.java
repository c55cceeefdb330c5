package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.buf;
import static io.millrace.interop.Interop.counting;
import static io.millrace.interop.Interop.echo;
import static io.millrace.interop.Interop.payload;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.frame.ErrorCode;
import io.millrace.interop.MillraceRecorder.StreamError;
import io.millrace.testing.TestCertificates;
import io.millrace.transport.netty.ClientTls;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.ServerTls;
import io.millrace.transport.netty.TransportUri;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.client.WebsocketClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.transport.netty.server.WebsocketServerTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * rsocket-java 1.1.5 (on reactor-netty) against Millrace in both directions over the transports
 * beyond plain TCP: WebSocket on path {@code /rsocket} (rsocket-java's WebsocketServerTransport and
 * WebsocketClientTransport), the same over TLS, TLS (rsocket-java's TCP transports on a secured
 * reactor-netty TcpServer or TcpClient) and Unix domain sockets (reactor-netty on epoll). Servers
 * present the test certificate for localhost and 127.0.0.1; clients trust only the test CA and
 * check the name, rsocket-java's as 127.0.0.1, Millrace's as localhost. Each interaction is checked
 * payload by payload with the echo semantics of the TCP interop tests.
 */
@Timeout(30)
class RSocketJavaTransportsInteropTest {
  private static final long UNBOUNDED = Integer.MAX_VALUE;
  private static final AtomicInteger SOCKETS = new AtomicInteger();

  private static SslContext rsocketJavaServerSsl;
  private static SslContext rsocketJavaClientSsl;
  private static ServerTls millraceServerTls;
  private static ClientTls millraceClientTls;

  private final Path socket =
      Path.of(
          System.getProperty("java.io.tmpdir"),
          "millrace-interop-" + ProcessHandle.current().pid() + "-" + SOCKETS.incrementAndGet());
  private final RecordingResponder responder = new RecordingResponder();
  private MillraceServer server;
  private RSocket rsocket;
  private JavaEchoServer javaServer;
  private MillraceClient client;

  /** A transport as each side sets it up. */
  enum Transport {
    WS {
      @Override
      String millraceListener(Path socket) {
        return "ws://" + HOST + ":0/rsocket";
      }

      @Override
      ClientTransport rsocketJavaClient(TransportUri listener) {
        return WebsocketClientTransport.create(
            HttpClient.create().host(listener.host()).port(listener.port()), listener.path());
      }

      @Override
      ServerTransport<CloseableChannel> rsocketJavaServer(Path socket) {
        return WebsocketServerTransport.create(HttpServer.create().host(HOST).port(0));
      }

      @Override
      String millraceTarget(JavaEchoServer server, Path socket) {
        return "ws://" + HOST + ":" + server.port() + "/rsocket";
      }
    },
    WSS {
      @Override
      String millraceListener(Path socket) {
        return "wss://" + HOST + ":0/rsocket";
      }

      @Override
      ClientTransport rsocketJavaClient(TransportUri listener) {
        return WebsocketClientTransport.create(
            HttpClient.create()
                .host(listener.host())
                .port(listener.port())
                .secure(spec -> spec.sslContext(rsocketJavaClientSsl)),
            listener.path());
      }

      @Override
      ServerTransport<CloseableChannel> rsocketJavaServer(Path socket) {
        return WebsocketServerTransport.create(
            HttpServer.create()
                .host(HOST)
                .port(0)
                .secure(spec -> spec.sslContext(rsocketJavaServerSsl)));
      }

      @Override
      String millraceTarget(JavaEchoServer server, Path socket) {
        return "wss://localhost:" + server.port() + "/rsocket";
      }
    },
    TLS {
      @Override
      String millraceListener(Path socket) {
        return "tls://" + HOST + ":0";
      }

      @Override
      ClientTransport rsocketJavaClient(TransportUri listener) {
        return TcpClientTransport.create(
            TcpClient.create()
                .host(listener.host())
                .port(listener.port())
                .secure(spec -> spec.sslContext(rsocketJavaClientSsl)));
      }

      @Override
      ServerTransport<CloseableChannel> rsocketJavaServer(Path socket) {
        return TcpServerTransport.create(
            TcpServer.create()
                .host(HOST)
                .port(0)
                .secure(spec -> spec.sslContext(rsocketJavaServerSsl)));
      }

      @Override
      String millraceTarget(JavaEchoServer server, Path socket) {
        return "tls://localhost:" + server.port();
      }
    },
    UNIX {
      @Override
      String millraceListener(Path socket) {
        return "unix://" + socket;
      }

      @Override
      ClientTransport rsocketJavaClient(TransportUri listener) {
        return TcpClientTransport.create(
            TcpClient.create().remoteAddress(() -> new DomainSocketAddress(listener.path())));
      }

      @Override
      ServerTransport<CloseableChannel> rsocketJavaServer(Path socket) {
        return TcpServerTransport.create(
            TcpServer.create().bindAddress(() -> new DomainSocketAddress(socket.toString())));
      }

      @Override
      String millraceTarget(JavaEchoServer server, Path socket) {
        return "unix://" + socket;
      }
    };

    /** The Millrace server's listener URI ({@code socket}: the file for a Unix socket). */
    abstract String millraceListener(Path socket);

    /** rsocket-java's transport to the Millrace server bound at {@code listener}. */
    abstract ClientTransport rsocketJavaClient(TransportUri listener);

    /** rsocket-java's server transport ({@code socket}: the file for a Unix socket). */
    abstract ServerTransport<CloseableChannel> rsocketJavaServer(Path socket);

    /** Where the Millrace client connects to the rsocket-java {@code server}. */
    abstract String millraceTarget(JavaEchoServer server, Path socket);
  }

  @BeforeAll
  static void certificates() throws Exception {
    Path serverCertificate = TestCertificates.path("server.pem");
    Path serverKey = TestCertificates.path("server.key");
    Path ca = TestCertificates.path("ca.pem");
    rsocketJavaServerSsl =
        SslContextBuilder.forServer(serverCertificate.toFile(), serverKey.toFile()).build();
    rsocketJavaClientSsl = SslContextBuilder.forClient().trustManager(ca.toFile()).build();
    millraceServerTls = ServerTls.builder(serverCertificate, serverKey).build();
    millraceClientTls = ClientTls.builder().trust(ca).build();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (rsocket != null) {
      rsocket.dispose();
      rsocket.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
    }
    if (server != null) {
      server.close();
    }
    if (client != null) {
      client.close();
    }
    if (javaServer != null) {
      javaServer.close();
    }
    Files.deleteIfExists(socket);
  }

  private static void assumeAvailable(Transport transport) {
    if (transport == Transport.UNIX) {
      assumeTrue(Epoll.isAvailable(), "reactor-netty's Unix domain sockets need epoll");
    }
  }

  private RSocket connectToMillrace(Transport transport) throws Exception {
    assumeAvailable(transport);
    server =
        MillraceServer.builder()
            .listen(transport.millraceListener(socket))
            .tls(millraceServerTls)
            .acceptor((setup, connection) -> responder)
            .bind();
    TransportUri listener = server.listeners().get(0);
    rsocket =
        RSocketConnector.create().connect(transport.rsocketJavaClient(listener)).block(TIMEOUT);
    return rsocket;
  }

  private Connection connectToRSocketJava(Transport transport) throws Exception {
    assumeAvailable(transport);
    javaServer = JavaEchoServer.startOn(transport.rsocketJavaServer(socket));
    client = MillraceClient.builder().tls(millraceClientTls).build();
    return client
        .connect(transport.millraceTarget(javaServer, socket))
        .get(TIMEOUT.toMillis(), MILLISECONDS);
  }

  // ---------------------------------------------------------------- rsocket-java client

  @ParameterizedTest
  @EnumSource(Transport.class)
  void rsocketJavaClient_requestResponse_echoedByMillraceServer(Transport transport)
      throws Exception {
    RSocket rsocket = connectToMillrace(transport);

    assertThat(echo(rsocket, "hello", "meta")).isEqualTo(Received.of("hello", "meta"));
    assertThat(echo(rsocket, "plain", null)).isEqualTo(Received.of("plain"));
    assertThatThrownBy(() -> rsocket.requestResponse(payload("error:boom", null)).block(TIMEOUT))
        .isInstanceOf(ApplicationErrorException.class)
        .hasMessage("boom");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void rsocketJavaClient_requestStreamTwoAtATime_allFromMillraceServerInOrder(Transport transport)
      throws Exception {
    RSocket rsocket = connectToMillrace(transport);

    List<Received> items =
        rsocket
            .requestStream(payload("5", "stream-meta"))
            .limitRate(2)
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(items).containsExactlyElementsOf(counting(5, "stream-meta"));
    assertThat(responder.maxStreamCredit.get()).isBetween(1L, 2L);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void rsocketJavaClient_requestChannel_everyPayloadEchoedByMillraceServer(Transport transport)
      throws Exception {
    RSocket rsocket = connectToMillrace(transport);
    List<Received> sent =
        List.of(Received.of("first", "first-meta"), Received.of("a"), Received.of("b", "b-meta"));

    List<Received> echoed =
        rsocket
            .requestChannel(Flux.fromIterable(sent).map(r -> payload(r.data(), r.metadata())))
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(echoed).containsExactlyElementsOf(sent);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void rsocketJavaClient_fireAndForget_receivedByMillraceServer(Transport transport)
      throws Exception {
    RSocket rsocket = connectToMillrace(transport);

    rsocket.fireAndForget(payload("fnf-data", "fnf-meta")).block(TIMEOUT);

    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
    assertThat(echo(rsocket, "after", null)).isEqualTo(Received.of("after"));
  }

  // ---------------------------------------------------------------- Millrace client

  @ParameterizedTest
  @EnumSource(Transport.class)
  void millraceClient_requestResponse_echoedByRSocketJavaServer(Transport transport)
      throws Exception {
    Connection connection = connectToRSocketJava(transport);

    assertThat(echo(connection, "hello", "meta")).containsExactly(Received.of("hello", "meta"));
    assertThat(echo(connection, "plain", null)).containsExactly(Received.of("plain"));
    MillraceRecorder failing = new MillraceRecorder();
    connection.requestResponse(null, buf("error:boom"), failing);
    StreamError error = failing.awaitError();
    assertThat(error.code).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(error).hasMessage("boom");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void millraceClient_requestStreamInTwoGrants_allFromRSocketJavaServerInOrder(Transport transport)
      throws Exception {
    Connection connection = connectToRSocketJava(transport);
    MillraceRecorder recorder = new MillraceRecorder();

    Stream stream = connection.requestStream(buf("stream-meta"), buf("5"), 2, recorder);
    await("the first 2 payloads", () -> recorder.items.size() == 2);
    connection.executor().execute(() -> stream.request(3));

    recorder.awaitComplete();
    assertThat(recorder.items).containsExactlyElementsOf(counting(5, "stream-meta"));
    assertThat(javaServer.streamRequests).containsExactly(2L, 3L);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void millraceClient_requestChannel_everyPayloadEchoedByRSocketJavaServer(Transport transport)
      throws Exception {
    Connection connection = connectToRSocketJava(transport);
    ChannelRequester channel = new ChannelRequester();

    Stream stream =
        connection.requestChannel(buf("first-meta"), buf("first"), UNBOUNDED, false, channel);
    connection
        .executor()
        .execute(
            () -> {
              channel.send(stream, List.of(Received.of("a"), Received.of("b", "b-meta")));
              channel.completeWhenSent(stream);
            });

    channel.awaitComplete();
    assertThat(channel.items)
        .containsExactly(
            Received.of("first", "first-meta"), Received.of("a"), Received.of("b", "b-meta"));
    assertThat(javaServer.channelReceived).containsExactlyElementsOf(channel.items);
    assertThat(javaServer.channelInboundComplete).isDone();
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void millraceClient_fireAndForget_receivedByRSocketJavaServer(Transport transport)
      throws Exception {
    Connection connection = connectToRSocketJava(transport);

    connection.fireAndForget(buf("fnf-meta"), buf("fnf-data"));

    assertThat(javaServer.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
    assertThat(echo(connection, "after", null)).containsExactly(Received.of("after"));
  }
}
