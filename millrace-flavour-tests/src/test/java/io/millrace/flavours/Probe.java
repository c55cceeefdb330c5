package io.millrace.flavours;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** What a responder saw in one test: payloads emitted, cancellation, fire-and-forgets. */
final class Probe {
  final AtomicLong emitted = new AtomicLong();
  final CountDownLatch cancelled = new CountDownLatch(1);
  final CountDownLatch answerCancelled = new CountDownLatch(1);

  /** Counted down when a handler got a request-response that never answers (futures only). */
  final CountDownLatch neverArrived = new CountDownLatch(1);

  final BlockingQueue<String> fireAndForgets = new LinkedTransferQueue<>();
  final BlockingQueue<String> metadataPushes = new LinkedTransferQueue<>();

  void emitted() {
    emitted.incrementAndGet();
  }

  void cancelled() {
    cancelled.countDown();
  }

  void answerCancelled() {
    answerCancelled.countDown();
  }

  boolean awaitCancelled() throws InterruptedException {
    return cancelled.await(10, TimeUnit.SECONDS);
  }

  /** Whether a request-response that never answers ({@link Behaviour#NEVER}) was cancelled. */
  boolean awaitAnswerCancelled() throws InterruptedException {
    return answerCancelled.await(10, TimeUnit.SECONDS);
  }
}
