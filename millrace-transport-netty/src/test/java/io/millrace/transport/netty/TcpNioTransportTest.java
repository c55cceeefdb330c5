package io.millrace.transport.netty;

/** The transport suite over TCP on the JDK's NIO. */
class TcpNioTransportTest extends TcpTransportTest {
  @Override
  protected IoKind ioKind() {
    return IoKind.NIO;
  }
}
