package io.millrace.transport.netty;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/** The transport suite over Unix domain sockets on io_uring, where the kernel allows it. */
class UnixIoUringTransportTest extends UnixTransportTest {
  @BeforeEach
  void ioUringAvailable() {
    Assumptions.assumeTrue(IoKind.IO_URING.isAvailable(), "io_uring is not available here");
  }

  @Override
  protected IoKind ioKind() {
    return IoKind.IO_URING;
  }
}
