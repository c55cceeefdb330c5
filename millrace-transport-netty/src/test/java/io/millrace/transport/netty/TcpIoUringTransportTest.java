package io.millrace.transport.netty;

/** The transport suite over TCP on io_uring, where the kernel allows it. */
class TcpIoUringTransportTest extends TcpTransportTest {
  @org.junit.jupiter.api.BeforeEach
  void ioUringAvailable() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        IoKind.IO_URING.isAvailable(), "io_uring is not available here");
  }

  @Override
  protected IoKind ioKind() {
    return IoKind.IO_URING;
  }
}
