package io.millrace.transport.netty;

/** The transport suite over Unix domain sockets on the preferred I/O kind. */
class UnixTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "unix://" + socketPath();
  }
}
