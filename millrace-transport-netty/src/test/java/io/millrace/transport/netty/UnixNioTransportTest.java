package io.millrace.transport.netty;

/** The transport suite over Unix domain sockets on the JDK's NIO (JDK 16+). */
class UnixNioTransportTest extends UnixTransportTest {
  @Override
  protected IoKind ioKind() {
    return IoKind.NIO;
  }
}
