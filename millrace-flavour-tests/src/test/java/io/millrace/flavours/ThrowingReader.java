package io.millrace.flavours;

import io.millrace.streams.Payload;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * Application code reading a stream, a requester flavour's own way, that throws as it handles one
 * payload: what it saw, and what its flavour told it afterwards (an error callback's argument, or
 * the exception as it left a blocking loop), if anything.
 */
final class ThrowingReader {
  final RuntimeException thrown = new IllegalStateException("the reader's code failed on purpose");
  final List<String> seen = new CopyOnWriteArrayList<>();
  final CountDownLatch threw = new CountDownLatch(1);
  private final int throwAt;
  volatile Throwable told;

  /** Throws at the payload of index {@code throwAt} (counted from 0). */
  ThrowingReader(int throwAt) {
    this.throwAt = throwAt;
  }

  /** The code's handling of one payload. */
  void read(Payload p) {
    if (seen.size() > throwAt + 100) {
      return; // a flavour that goes on delivering after the throw: enough to show it
    }
    seen.add(p.dataUtf8());
    if (seen.size() == throwAt + 1) {
      threw.countDown();
      throw thrown;
    }
  }

  void told(Throwable t) {
    told = t;
    toldLatch.countDown();
  }

  /** Counted down when the code is told something after its throw. */
  final CountDownLatch toldLatch = new CountDownLatch(1);
}
