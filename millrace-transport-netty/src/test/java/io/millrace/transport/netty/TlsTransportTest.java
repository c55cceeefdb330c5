package io.millrace.transport.netty;

/** The transport suite over TLS with OpenSSL (BoringSSL through netty-tcnative). */
class TlsTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "tls://127.0.0.1:0";
  }

  @Override
  protected TlsProvider tlsProvider() {
    return TlsProvider.OPENSSL;
  }
}
