package io.millrace.grpc;

import static io.millrace.testing.TestCertificates.path;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.ClientTls;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.ServerTls;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.util.ReferenceCountUtil;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC on a Millrace server's own port, next to RSocket and WebSocket: grpc-java's client reaches
 * the endpoint through the handoff, in plaintext and under TLS (ALPN h2), the service sees the
 * caller's real address, and a caller that stops reading holds the service back.
 */
class SharedPortGrpcTest {
  private static final ConnectionConfig RPC =
      ConnectionConfig.builder()
          .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
          .build();

  private final ProbeService probe = new ProbeService();
  private GrpcEndpoint endpoint;
  private MillraceServer server;
  private ManagedChannel channel;
  private MillraceClient client;

  /** What grpc-java's calls saw of their transport, recorded by an interceptor. */
  private final java.util.concurrent.BlockingQueue<io.grpc.ServerCall<?, ?>> calls =
      new java.util.concurrent.LinkedBlockingQueue<>();

  private void start(String listen, ServerTls tls) throws Exception {
    RpcServer rpc =
        RpcServer.builder()
            .service(EchoServiceReactor.bind(new EchoServiceImpl()))
            .service(probe.definition())
            .build();
    endpoint =
        GrpcEndpoint.builder(rpc)
            .sharedPorts()
            .configure(
                b ->
                    b.intercept(
                        new io.grpc.ServerInterceptor() {
                          @Override
                          public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
                              io.grpc.ServerCall<Q, R> call,
                              io.grpc.Metadata headers,
                              io.grpc.ServerCallHandler<Q, R> next) {
                            calls.add(call);
                            return next.startCall(call, headers);
                          }
                        }))
            .start();
    MillraceServer.Builder builder =
        MillraceServer.builder()
            .listen(listen)
            .http2Handoff(endpoint.handoff())
            .acceptor((setup, connection) -> rpc.responder(setup, connection));
    if (tls != null) {
      builder.tls(tls);
    }
    server = builder.bind();
  }

  @AfterEach
  void stop() throws Exception {
    if (server == null) {
      return; // start() failed: its exception says why
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(5, TimeUnit.SECONDS);
    }
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
    java.nio.file.Path socket =
        java.nio.file.Path.of(
            io.millrace.transport.netty.EventLoops.domainSocketPath(
                ((SharedPortHandoff) endpoint.handoff()).target()));
    if (java.nio.file.Files.exists(socket.getParent())) { // unless a test closed the endpoint
      assertThat(java.nio.file.Files.getPosixFilePermissions(socket.getParent()))
          .as("the splice's socket directory is private")
          .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }
    endpoint.close();
    assertThat(socket.getParent()).doesNotExist();
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  /**
   * A graceful shutdown of the Millrace server lets a gRPC call in flight on the shared port finish
   * (the splice sends the caller GOAWAY between two of grpc-java's frames), and the server
   * terminates once the caller has closed the connection. Before, the server's loops stopped as
   * soon as no RSocket connection was left, and the call was cut.
   */
  @Test
  void shutdown_letsAGrpcCallInFlightFinish_andTheCallerThenCloses() throws Exception {
    start("tcp://127.0.0.1:0", null);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    java.util.concurrent.BlockingQueue<Object> replies =
        new java.util.concurrent.LinkedBlockingQueue<>();
    io.grpc.stub.StreamObserver<EchoRequest> chat =
        EchoServiceGrpc.newStub(channel)
            .chat(
                new io.grpc.stub.StreamObserver<>() {
                  @Override
                  public void onNext(EchoReply value) {
                    replies.add(value.getPayload().toStringUtf8());
                  }

                  @Override
                  public void onError(Throwable t) {
                    replies.add(t);
                  }

                  @Override
                  public void onCompleted() {
                    replies.add("completed");
                  }
                });
    chat.onNext(request("before"));
    assertThat(replies.poll(10, TimeUnit.SECONDS)).isEqualTo("before");

    server.shutdown();
    assertThat(server.awaitTermination(300, TimeUnit.MILLISECONDS))
        .as("a call is still in flight")
        .isFalse();
    chat.onNext(request("during"));
    assertThat(replies.poll(10, TimeUnit.SECONDS)).isEqualTo("during");
    chat.onCompleted();
    assertThat(replies.poll(10, TimeUnit.SECONDS)).isEqualTo("completed");
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS))
        .as("the caller closed the connection after GOAWAY and its last call")
        .isTrue();
  }

  @Test
  void plaintextPort_servesGrpcRSocketAndWebSocket() throws Exception {
    start("tcp://127.0.0.1:0", null);
    int port = server.port();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    EchoServiceGrpc.EchoServiceBlockingStub stub =
        EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    assertThat(stub.echo(request("over grpc")).getPayload().toStringUtf8()).isEqualTo("over grpc");
    Iterator<EchoReply> replies =
        stub.count(io.millrace.echo.v1.CountRequest.newBuilder().setN(1000).build());
    int count = 0;
    while (replies.hasNext()) {
      replies.next();
      count++;
    }
    assertThat(count).isEqualTo(1000);
    EchoReply caller =
        ClientCalls.blockingUnaryCall(
            channel,
            GrpcServices.toGrpc(ProbeService.HEADERS, null),
            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
            request(""));
    assertThat(caller.getPayload().toStringUtf8())
        .as("the caller's address")
        .endsWith("/127.0.0.1");

    client = MillraceClient.builder().config(RPC).build();
    for (String uri :
        new String[] {"tcp://127.0.0.1:" + port, "ws://127.0.0.1:" + port + "/rsocket"}) {
      Connection connection = client.connect(uri).get(5, TimeUnit.SECONDS);
      EchoReply reply =
          new EchoServiceReactor.Client(RpcClient.of(ReactiveRequester.of(connection)))
              .echo(request("over " + uri))
              .block(java.time.Duration.ofSeconds(5));
      assertThat(reply.getPayload().toStringUtf8()).isEqualTo("over " + uri);
    }
  }

  @Test
  void mutualTlsPort_grpcJavaSeesTheCallersCertificateAddressAndSecurityLevel() throws Exception {
    start(
        "tls://127.0.0.1:0",
        ServerTls.builder(path("server.pem"), path("server.key"))
            .requireClientCertificates(path("ca.pem"))
            .build());
    channel =
        NettyChannelBuilder.forAddress("localhost", server.port())
            .sslContext(
                GrpcSslContexts.forClient()
                    .trustManager(path("ca.pem").toFile())
                    .keyManager(path("client.pem").toFile(), path("client.key").toFile())
                    .build())
            .build();
    assertThat(
            EchoServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .echo(request("with a certificate"))
                .getPayload()
                .toStringUtf8())
        .isEqualTo("with a certificate");
    io.grpc.ServerCall<?, ?> call = calls.poll(5, TimeUnit.SECONDS);
    assertThat(call).isNotNull();
    javax.net.ssl.SSLSession tls =
        call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_SSL_SESSION);
    assertThat(tls).as("the caller's TLS session").isNotNull();
    java.security.cert.X509Certificate certificate =
        (java.security.cert.X509Certificate) tls.getPeerCertificates()[0];
    java.security.cert.X509Certificate expected;
    try (java.io.InputStream in = java.nio.file.Files.newInputStream(path("client.pem"))) {
      expected =
          (java.security.cert.X509Certificate)
              java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    assertThat(certificate).as("the client's certificate").isEqualTo(expected);
    assertThat(call.getSecurityLevel()).isEqualTo(io.grpc.SecurityLevel.PRIVACY_AND_INTEGRITY);
    java.net.InetSocketAddress remote =
        (java.net.InetSocketAddress)
            call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    assertThat(remote.getAddress().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_LOCAL_ADDR))
        .isEqualTo(new java.net.InetSocketAddress("127.0.0.1", server.port()));
  }

  @Test
  void plaintextPort_grpcJavaSeesNoTlsSession() throws Exception {
    start("tcp://127.0.0.1:0", null);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    EchoServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .echo(request("plain"));
    io.grpc.ServerCall<?, ?> call = calls.poll(5, TimeUnit.SECONDS);
    assertThat(call).isNotNull();
    assertThat(call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_SSL_SESSION)).isNull();
    assertThat(call.getSecurityLevel()).isEqualTo(io.grpc.SecurityLevel.NONE);
  }

  @Test
  void tlsPort_grpcWithAlpnH2_andRSocketOverTls() throws Exception {
    start("tls://127.0.0.1:0", ServerTls.builder(path("server.pem"), path("server.key")).build());
    int port = server.port();
    channel =
        NettyChannelBuilder.forAddress("localhost", port)
            .sslContext(GrpcSslContexts.forClient().trustManager(path("ca.pem").toFile()).build())
            .build();
    assertThat(
            EchoServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .echo(request("grpc over tls"))
                .getPayload()
                .toStringUtf8())
        .isEqualTo("grpc over tls");
    client =
        MillraceClient.builder()
            .config(RPC)
            .tls(ClientTls.builder().trust(path("ca.pem")).build())
            .build();
    Connection connection = client.connect("tls://localhost:" + port).get(5, TimeUnit.SECONDS);
    assertThat(
            new EchoServiceReactor.Client(RpcClient.of(ReactiveRequester.of(connection)))
                .echo(request("rsocket over tls"))
                .block(java.time.Duration.ofSeconds(5))
                .getPayload()
                .toStringUtf8())
        .isEqualTo("rsocket over tls");
  }

  /**
   * A raw HTTP/2 caller of one server-streaming method that grants the server 2 GiB of flow-control
   * window, so that only the sockets can hold the server back, and counts what it receives.
   */
  private static final class GreedyCaller implements AutoCloseable {
    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    final AtomicLong received = new AtomicLong();
    final CompletableFuture<Object> ended = new CompletableFuture<>();
    final Channel connection;

    GreedyCaller(int port, String method, EchoRequest request) throws Exception {
      connection =
          RawHttp2.connect(
              group,
              port,
              Http2Settings.defaultSettings().initialWindowSize(Integer.MAX_VALUE),
              new ChannelInboundHandlerAdapter());
      connection
          .writeAndFlush(new DefaultHttp2WindowUpdateFrame(Integer.MAX_VALUE - 65_535))
          .sync();
      Http2StreamChannel stream =
          new Http2StreamChannelBootstrap(connection)
              .handler(
                  new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                      if (msg instanceof Http2DataFrame data) {
                        received.addAndGet(data.content().readableBytes());
                      } else if (msg instanceof Http2HeadersFrame h && h.isEndStream()) {
                        ended.complete("grpc-status " + h.headers().get("grpc-status"));
                      } else if (msg instanceof Http2ResetFrame) {
                        ended.complete(msg.toString());
                      }
                      ReferenceCountUtil.release(msg);
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                      ended.complete("the stream closed");
                    }
                  })
              .open()
              .sync()
              .getNow();
      stream.write(
          new DefaultHttp2HeadersFrame(
              new DefaultHttp2Headers()
                  .method("POST")
                  .scheme("http")
                  .path("/" + method)
                  .authority("127.0.0.1")
                  .add("content-type", "application/grpc")
                  .add("te", "trailers")));
      byte[] message = request.toByteArray();
      ByteBuf framed = connection.alloc().buffer(5 + message.length);
      framed.writeByte(0).writeInt(message.length).writeBytes(message);
      stream.writeAndFlush(new DefaultHttp2DataFrame(framed, true)).sync();
    }

    /** Replies received so far (each 64 KiB of payload and a few bytes of framing). */
    long replies() {
      return received.get() / (ProbeService.FLOOD_REPLY_BYTES + 5);
    }

    void reading(boolean on) {
      connection.config().setAutoRead(on);
      if (on) {
        connection.read();
      }
    }

    /** Reads 4 KiB every millisecond from now on. */
    void trickle() {
      connection
          .config()
          .setRecvByteBufAllocator(new FixedRecvByteBufAllocator(4096).maxMessagesPerRead(1));
      group.scheduleAtFixedRate(connection::read, 1, 1, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
      connection.close().syncUninterruptibly();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void aCallerThatStopsReading_holdsTheServiceBack_andGetsTheRestWhenItReadsAgain()
      throws Exception {
    start("tcp://127.0.0.1:0", null);
    try (GreedyCaller caller =
        new GreedyCaller(server.port(), ProbeService.FLOOD.fullName(), request(""))) {
      caller.reading(false);

      // The flood stops: socket buffers and water marks fill, grpc-java's call is not ready.
      long before = -1;
      long now = probe.flooded.get();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (now != before || now == 0) {
        assertThat(System.nanoTime() - deadline).as("the flood did not stop").isNegative();
        Thread.sleep(1_000);
        before = now;
        now = probe.flooded.get();
      }
      long held = now;
      assertThat((held - caller.replies()) * ProbeService.FLOOD_REPLY_BYTES)
          .as("bytes produced and not yet read by a caller that does not read")
          .isLessThan(16L << 20); // about 5 MiB here: socket buffers, water marks, 16 replies
      assertThat(caller.ended).isNotDone();

      // Reading again, the caller gets everything produced and the stream goes on.
      caller.reading(true);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (caller.replies() < held + 200
          && !caller.ended.isDone()
          && System.nanoTime() - until < 0) {
        Thread.sleep(10);
      }
      assertThat(caller.ended).as("the call ended early").isNotDone();
      assertThat(caller.replies()).isGreaterThanOrEqualTo(held + 200);
    }
  }

  @Test
  void anEndpointClosingWhileACallerLags_stillDeliversTheRestAndTheTrailers() throws Exception {
    start("tcp://127.0.0.1:0", null);
    int replies = 200; // 12.5 MiB: far more than the sockets hold for a caller that does not read
    try (GreedyCaller caller =
        new GreedyCaller(
            server.port(),
            ProbeService.FLOOD.fullName(),
            request("").toBuilder().setFailWithStatus(replies).build())) {
      caller.reading(false);
      Thread.sleep(1_000); // the buffers fill
      assertThat(probe.floodsDone).as("held back by a caller that does not read").hasValue(0);
      // The endpoint closes while the call runs; grpc-java finishes the call within the grace,
      // then ends the connection. The caller reads slowly, 4 KiB a millisecond, so the splice
      // still holds bytes for it when grpc-java's end arrives: they must go out before the close.
      Thread closing = new Thread(() -> endpoint.close(java.time.Duration.ofSeconds(20)));
      closing.start();
      caller.trickle();
      assertThat(caller.ended.get(20, TimeUnit.SECONDS)).isEqualTo("grpc-status 0");
      assertThat(caller.replies()).isEqualTo(replies);
      closing.join(20_000);
    }
  }

  @Test
  void afterTheEndpointCloses_grpcCallersOnTheSharedPortAreRefusedAtOnce() throws Exception {
    start("tcp://127.0.0.1:0", null);
    endpoint.close();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    io.grpc.StatusRuntimeException failure =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            io.grpc.StatusRuntimeException.class,
            () ->
                EchoServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .echo(request("anyone there?")));
    assertThat(failure.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
  }
}
