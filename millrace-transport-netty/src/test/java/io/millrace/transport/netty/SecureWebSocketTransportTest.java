package io.millrace.transport.netty;

/** The transport suite over WebSocket under TLS. */
class SecureWebSocketTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "wss://127.0.0.1:0/rsocket";
  }
}
