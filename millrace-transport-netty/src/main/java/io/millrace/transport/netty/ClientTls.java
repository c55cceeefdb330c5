package io.millrace.transport.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * A client's TLS: which servers it trusts (the JDK's default trust store unless given a CA file),
 * its own certificate for mutual TLS, and whether the server's name is checked against its
 * certificate (on by default: a certificate for another name is refused). TLS 1.3 and 1.2 only,
 * forward-secret AEAD suites only.
 *
 * <pre>{@code
 * ClientTls tls = ClientTls.builder()
 *     .trust(Path.of("ca.pem"))
 *     .keyPair(Path.of("client.pem"), Path.of("client.key"))   // mutual TLS
 *     .build();
 * MillraceClient.builder().tls(tls).build().connect("tls://db-1.internal:7878");
 * }</pre>
 */
public final class ClientTls {
  private final SslContext plain;
  private final SslContext http11;
  private final boolean verifyHostname;

  private ClientTls(Builder b) throws IOException {
    this.verifyHostname = b.verifyHostname && !b.insecure;
    this.plain = build(b, List.of());
    this.http11 = build(b, List.of("http/1.1"));
  }

  public static Builder builder() {
    return new Builder();
  }

  private static SslContext build(Builder b, List<String> alpn) throws IOException {
    try {
      SslContextBuilder builder =
          SslContextBuilder.forClient()
              .sslProvider(b.provider.netty())
              .protocols(TlsDefaults.PROTOCOLS)
              .ciphers(TlsDefaults.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
              .endpointIdentificationAlgorithm(null); // set per connection, with the host
      if (b.insecure) {
        builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
      } else if (b.trustedCa != null) {
        builder.trustManager(b.trustedCa.toFile());
      }
      if (b.certificateChain != null) {
        builder.keyManager(b.certificateChain.toFile(), b.privateKey.toFile());
      }
      if (!alpn.isEmpty()) {
        builder.applicationProtocolConfig(
            new ApplicationProtocolConfig(
                ApplicationProtocolConfig.Protocol.ALPN,
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                alpn));
      }
      return builder.build();
    } catch (IOException | IllegalArgumentException e) {
      throw new IOException("cannot set up TLS: " + e.getMessage(), e);
    }
  }

  /** A handler for a connection to {@code host} (name for SNI and verification) and port. */
  SslHandler newHandler(ByteBufAllocator alloc, String host, int port, boolean webSocket) {
    SslHandler handler = (webSocket ? http11 : plain).newHandler(alloc, host, port);
    if (verifyHostname) {
      SSLEngine engine = handler.engine();
      SSLParameters parameters = engine.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      engine.setSSLParameters(parameters);
    }
    return handler;
  }

  /** Configures a {@link ClientTls}. */
  public static final class Builder {
    private Path trustedCa;
    private Path certificateChain;
    private Path privateKey;
    private boolean insecure;
    private boolean verifyHostname = true;
    private TlsProvider provider = TlsProvider.AUTO;

    private Builder() {}

    /** Trusts servers whose certificates a CA in this PEM file issued (not the JDK's defaults). */
    public Builder trust(Path caCertificates) {
      this.trustedCa = Objects.requireNonNull(caCertificates);
      return this;
    }

    /** This client's certificate chain and PKCS#8 key, for servers that ask for one. */
    public Builder keyPair(Path certificateChain, Path privateKey) {
      this.certificateChain = Objects.requireNonNull(certificateChain);
      this.privateKey = Objects.requireNonNull(privateKey);
      return this;
    }

    /**
     * Trusts any server certificate and checks no name: encryption without authentication, for
     * tests against self-signed servers only.
     */
    public Builder insecure() {
      this.insecure = true;
      return this;
    }

    /**
     * Whether the host in the URI must match the server's certificate (its subject alternative
     * names). Default true; turning it off lets any certificate from a trusted CA stand in.
     */
    public Builder hostnameVerification(boolean verify) {
      this.verifyHostname = verify;
      return this;
    }

    public Builder provider(TlsProvider provider) {
      this.provider = Objects.requireNonNull(provider);
      return this;
    }

    /** Reads the files; throws when they cannot be read. */
    public ClientTls build() throws IOException {
      return new ClientTls(this);
    }
  }
}
