package io.millrace.transport.netty;

/** The transport suite over TLS with the JDK's provider. */
class TlsJdkTransportTest extends TlsTransportTest {
  @Override
  protected TlsProvider tlsProvider() {
    return TlsProvider.JDK;
  }
}
