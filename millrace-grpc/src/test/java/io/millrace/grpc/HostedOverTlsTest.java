package io.millrace.grpc;

import static io.millrace.testing.TestCertificates.path;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.ClientTls;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.ServerTls;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A grpc-java service hosted on a Millrace server that takes RSocket over mutual TLS: its
 * interceptor finds the caller's certificate where grpc-java's server puts it, and a plaintext
 * caller is seen as such.
 */
class HostedOverTlsTest {
  private static final ConnectionConfig RPC =
      ConnectionConfig.builder()
          .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
          .build();

  /** Keeps what an authorising interceptor would read of each call. */
  private final BlockingQueue<ServerCall<?, ?>> calls = new LinkedBlockingQueue<>();

  private MillraceServer server;
  private MillraceClient client;

  private void start(String listen, ServerTls tls) throws Exception {
    ServerInterceptor seeing =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            calls.add(call);
            return next.startCall(call, headers);
          }
        };
    RpcServer rpc =
        RpcServer.builder()
            .service(HostedServices.of(new HostedServicesTest.GrpcEcho(), seeing))
            .build();
    MillraceServer.Builder b =
        MillraceServer.builder()
            .listen(listen)
            .acceptor((setup, connection) -> rpc.responder(setup, connection));
    if (tls != null) {
      b.tls(tls);
    }
    server = b.bind();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private String echo(Connection connection, String text) {
    return new EchoServiceReactor.Client(RpcClient.of(ReactiveRequester.of(connection)))
        .echo(EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(text)).build())
        .block(Duration.ofSeconds(10))
        .getPayload()
        .toStringUtf8();
  }

  @Test
  void mutualTls_theInterceptorSeesTheCallersCertificate_andThePrivacyLevel() throws Exception {
    start(
        "tls://127.0.0.1:0",
        ServerTls.builder(path("server.pem"), path("server.key"))
            .requireClientCertificates(path("ca.pem"))
            .build());
    client =
        MillraceClient.builder()
            .config(RPC)
            .tls(
                ClientTls.builder()
                    .trust(path("ca.pem"))
                    .keyPair(path("client.pem"), path("client.key"))
                    .build())
            .build();
    Connection connection =
        client.connect("tls://localhost:" + server.port()).get(10, TimeUnit.SECONDS);
    assertThat(connection.tlsSession()).as("the client's view of its connection").isNotNull();
    assertThat(echo(connection, "with a certificate")).isEqualTo("with a certificate");

    ServerCall<?, ?> call = calls.poll(5, TimeUnit.SECONDS);
    assertThat(call).isNotNull();
    SSLSession tls = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    assertThat(tls).as("the caller's TLS session").isNotNull();
    X509Certificate expected;
    try (InputStream in = Files.newInputStream(path("client.pem"))) {
      expected = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    assertThat(tls.getPeerCertificates()[0]).isEqualTo(expected);
    assertThat(call.getSecurityLevel()).isEqualTo(SecurityLevel.PRIVACY_AND_INTEGRITY);
    assertThat(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)).isNotNull();
  }

  @Test
  void plaintext_noSession_andNoSecurity() throws Exception {
    start("tcp://127.0.0.1:0", null);
    client = MillraceClient.builder().config(RPC).build();
    Connection connection =
        client.connect("tcp://127.0.0.1:" + server.port()).get(10, TimeUnit.SECONDS);
    assertThat(connection.tlsSession()).isNull();
    assertThat(echo(connection, "plain")).isEqualTo("plain");
    ServerCall<?, ?> call = calls.poll(5, TimeUnit.SECONDS);
    assertThat(call).isNotNull();
    assertThat(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)).isNull();
    assertThat(call.getSecurityLevel()).isEqualTo(SecurityLevel.NONE);
  }
}
