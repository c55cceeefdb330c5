package io.millrace.transport.netty;

/** The transport suite over WebSocket: one frame per binary message. */
class WebSocketTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "ws://127.0.0.1:0/rsocket";
  }
}
