package io.millrace.transport.netty;

import static io.millrace.testing.TestCertificates.path;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What TLS guarantees beyond carrying the suite: who is trusted, mutual TLS, hostname verification,
 * the refused protocol versions and suites, and certificate reload; on both providers where the
 * provider matters.
 */
class TlsTest {
  private final Servers servers = new Servers();

  @AfterEach
  void close() throws Exception {
    servers.close();
  }

  private static ServerTls.Builder serverTls(String name) {
    return ServerTls.builder(path(name + ".pem"), path(name + ".key"));
  }

  private static ClientTls.Builder trustingCa() {
    return ClientTls.builder().trust(path("ca.pem"));
  }

  private MillraceServer server(ServerTls tls) throws Exception {
    return servers.echo(MillraceServer.builder().listen("tls://127.0.0.1:0").tls(tls));
  }

  private Connection connect(MillraceServer server, ClientTls tls, String host) throws Exception {
    TransportUri uri = TransportUri.parse("tls://" + host + ":" + server.port());
    return servers
        .client(MillraceClient.builder().tls(tls))
        .connect(uri, null, null)
        .get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"OPENSSL", "JDK"})
  void mutualTls_clientWithCertificateFromTheCa_served(TlsProvider provider) throws Exception {
    MillraceServer server =
        server(
            serverTls("server")
                .provider(provider)
                .requireClientCertificates(path("ca.pem"))
                .build());
    Connection connection =
        connect(
            server,
            trustingCa().provider(provider).keyPair(path("client.pem"), path("client.key")).build(),
            "localhost");
    assertThat(Servers.echo(connection, "mutual")).isEqualTo("mutual");
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"OPENSSL", "JDK"})
  void mutualTls_clientWithoutCertificate_orFromAnotherCa_neverServed(TlsProvider provider)
      throws Exception {
    MillraceServer server =
        server(
            serverTls("server")
                .provider(provider)
                .requireClientCertificates(path("ca.pem"))
                .build());
    assertRefused(server, trustingCa().provider(provider).build());
    assertRefused(
        server,
        trustingCa()
            .provider(provider)
            .keyPair(path("other-client.pem"), path("other-client.key"))
            .build());
  }

  /**
   * With TLS 1.3 the client may finish its handshake before the server has checked the client's
   * certificate, so a refusal shows either as a failed connect or as a connection closed before any
   * answer.
   */
  private void assertRefused(MillraceServer server, ClientTls tls) throws Exception {
    Connection connection;
    try {
      connection = connect(server, tls, "localhost");
    } catch (ExecutionException e) {
      return;
    }
    assertThatThrownBy(() -> Servers.echo(connection, "let me in")).isNotNull();
    connection.onClose().toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void serverFromAnotherCa_connectFailsWithTheTlsError() throws Exception {
    MillraceServer server = server(serverTls("server").build());
    assertThatThrownBy(
            () ->
                connect(
                    server, ClientTls.builder().trust(path("other-ca.pem")).build(), "localhost"))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(SSLException.class);
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"OPENSSL", "JDK"})
  void certificateForAnotherName_refusedUnlessVerificationIsOff(TlsProvider provider)
      throws Exception {
    MillraceServer server = server(serverTls("wrong-host").build());
    assertThatThrownBy(() -> connect(server, trustingCa().provider(provider).build(), "localhost"))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(SSLException.class);
    Connection unverified =
        connect(
            server,
            trustingCa().provider(provider).hostnameVerification(false).build(),
            "localhost");
    assertThat(Servers.echo(unverified, "any name")).isEqualTo("any name");
  }

  @Test
  void insecureClient_trustsAnyCertificate() throws Exception {
    MillraceServer server = server(serverTls("wrong-host").build());
    Connection connection = connect(server, ClientTls.builder().insecure().build(), "127.0.0.1");
    assertThat(Servers.echo(connection, "insecure")).isEqualTo("insecure");
  }

  @Test
  void ipAddressInTheUri_verifiedAgainstTheCertificatesIpEntry() throws Exception {
    MillraceServer server = server(serverTls("server").build());
    Connection connection = connect(server, trustingCa().build(), "127.0.0.1");
    assertThat(Servers.echo(connection, "by address")).isEqualTo("by address");
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"OPENSSL", "JDK"})
  void suitesWithoutAuthenticatedEncryption_refused(TlsProvider provider) throws Exception {
    MillraceServer server = server(serverTls("server").provider(provider).build());
    assertThatThrownBy(
            () -> handshake(server.port(), "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"))
        .isInstanceOf(IOException.class);
    assertThat(handshake(server.port(), "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"))
        .isNotNull();
    assertThat(handshake(server.port(), "TLSv1.3", null)).isNotNull();
  }

  @Test
  void reload_newConnectionsGetTheNewCertificate_openOnesKeepWorking(@TempDir Path dir)
      throws Exception {
    Path cert = dir.resolve("tls.pem");
    Path key = dir.resolve("tls.key");
    install("server", cert, key);
    ServerTls tls = ServerTls.builder(cert, key).reloadEvery(Duration.ofMillis(50)).build();
    MillraceServer server = server(tls);
    Connection before = connect(server, trustingCa().build(), "localhost");
    X509Certificate first = handshake(server.port(), "TLSv1.3", null);

    install("server-renewed", cert, key);
    X509Certificate renewed = first;
    for (int i = 0; i < 100 && renewed.equals(first); i++) {
      Thread.sleep(50);
      renewed = handshake(server.port(), "TLSv1.3", null);
    }
    assertThat(renewed).as("the certificate after the files changed").isNotEqualTo(first);
    assertThat(renewed.getSerialNumber())
        .isEqualTo(certificate("server-renewed").getSerialNumber());
    assertThat(Servers.echo(before, "still open")).isEqualTo("still open");

    Files.writeString(cert, "not a certificate");
    assertThatThrownBy(tls::reload).isInstanceOf(IOException.class);
    assertThat(handshake(server.port(), "TLSv1.3", null)).isEqualTo(renewed);
  }

  @Test
  void certificateAndKeyThatDoNotMatch_refusedWhenBuilt() {
    assertThatThrownBy(() -> ServerTls.builder(path("server.pem"), path("client.key")).build())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("server.pem");
  }

  private static void install(String name, Path cert, Path key) throws IOException {
    // Written beside and moved into place, as certificate tools do.
    Path newCert = cert.resolveSibling("new.pem");
    Path newKey = key.resolveSibling("new.key");
    Files.copy(path(name + ".pem"), newCert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(path(name + ".key"), newKey, StandardCopyOption.REPLACE_EXISTING);
    Files.move(newKey, key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    Files.move(newCert, cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    // Modification times can be coarse: make the change visible whatever the clock.
    Files.setLastModifiedTime(
        cert, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 1000));
  }

  private static X509Certificate certificate(String name) throws Exception {
    try (var in = Files.newInputStream(path(name + ".pem"))) {
      return (X509Certificate)
          java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /** A JDK client handshake limited to {@code protocol} (and {@code suite}): the server's cert. */
  private static X509Certificate handshake(int port, String protocol, String suite)
      throws Exception {
    SSLContext context =
        ((JdkSslContext)
                SslContextBuilder.forClient()
                    .sslProvider(SslProvider.JDK)
                    .trustManager(path("ca.pem").toFile())
                    .build())
            .context();
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(5000);
      socket.setEnabledProtocols(new String[] {protocol});
      if (suite != null) {
        socket.setEnabledCipherSuites(new String[] {suite});
      }
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }
}
