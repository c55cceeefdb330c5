package io.millrace.transport.netty;

/** The transport suite over TCP on the preferred I/O kind (epoll on Linux, NIO elsewhere). */
class TcpTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "tcp://127.0.0.1:0";
  }
}
