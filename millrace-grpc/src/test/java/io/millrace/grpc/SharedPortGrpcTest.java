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
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC on a Millrace server's own port, next to RSocket and WebSocket: grpc-java's client reaches
 * the endpoint through the handoff, in plaintext and under TLS (ALPN h2), and the service sees the
 * caller's real address.
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

  private void start(String listen, ServerTls tls) throws Exception {
    RpcServer rpc =
        RpcServer.builder()
            .service(EchoServiceReactor.bind(new EchoServiceImpl()))
            .service(probe.definition())
            .build();
    endpoint = GrpcEndpoint.builder(rpc).sharedPorts().start();
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
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(5, TimeUnit.SECONDS);
    }
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
    endpoint.close();
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
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
}
