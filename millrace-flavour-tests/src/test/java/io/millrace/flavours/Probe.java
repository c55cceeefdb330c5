package io.millrace.flavours;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** What a responder saw in one test: payloads emitted, cancellation, fire-and-forgets. */
final class Probe {
  final AtomicLong emitted = new AtomicLong();
  final CountDownLatch cancelled = new CountDownLatch(1);
  final BlockingQueue<String> fireAndForgets = new LinkedBlockingQueue<>();

  void emitted() {
    emitted.incrementAndGet();
  }

  void cancelled() {
    cancelled.countDown();
  }

  boolean awaitCancelled() throws InterruptedException {
    return cancelled.await(10, TimeUnit.SECONDS);
  }
}
