package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

/**
 * {@link SerialSubscription} without sockets: demand and a cancel made before the source arrives
 * reach it on arrival, and calls from many threads reach it one at a time with no demand lost (the
 * lock-per-request version it replaced was caught overlapping here within a few rounds).
 */
class SerialSubscriptionTest {

  /** A source's subscription that records demand and fails on a second caller at once. */
  private static final class Strict implements Subscription {
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicLong requested = new AtomicLong();
    final AtomicInteger cancels = new AtomicInteger();

    private void enter() {
      if (inside.incrementAndGet() > 1) {
        overlaps.incrementAndGet();
      }
      Thread.onSpinWait(); // widen the window a little
    }

    @Override
    public void request(long n) {
      enter();
      requested.addAndGet(n);
      inside.decrementAndGet();
    }

    @Override
    public void cancel() {
      enter();
      cancels.incrementAndGet();
      inside.decrementAndGet();
    }
  }

  /**
   * A source that emits inside request, as a range does, whose subscriber cancels in its third
   * onNext: the source hears the cancel then, not after all it was asked for. (Before, the cancel
   * waited for the request to return: the RPC TCK's rule 3.17 check spent 28 seconds emitting 2^31
   * responses into a cancelled call.)
   */
  @Test
  void aCancelFromWithinTheSourcesRequest_reachesItAtOnce() {
    SerialSubscription d = new SerialSubscription();
    AtomicLong emitted = new AtomicLong();
    AtomicInteger cancels = new AtomicInteger();
    d.set(
        new Subscription() {
          private boolean cancelled;

          @Override
          public void request(long n) {
            for (long i = 0; i < n && !cancelled; i++) {
              if (emitted.incrementAndGet() == 3) {
                d.cancel(); // the subscriber's onNext
              }
            }
          }

          @Override
          public void cancel() {
            cancelled = true;
            cancels.incrementAndGet();
          }
        });
    d.request(1_000_000);
    assertThat(emitted).hasValue(3);
    assertThat(cancels).hasValue(1);
    d.cancel();
    d.request(5);
    assertThat(cancels).hasValue(1);
    assertThat(emitted).hasValue(3);
  }

  @Test
  void demandBeforeTheSource_isPassedOnWhenItArrives_andACancelBeforeCancelsIt() {
    SerialSubscription d = new SerialSubscription();
    d.request(3);
    d.request(4);
    Strict s = new Strict();
    d.set(s);
    assertThat(s.requested).hasValue(7);
    d.request(2);
    assertThat(s.requested).hasValue(9);
    d.cancel();
    d.request(1); // after the cancel: not passed on
    assertThat(s.requested).hasValue(9);
    assertThat(s.cancels).hasValue(1);

    SerialSubscription cancelledFirst = new SerialSubscription();
    cancelledFirst.request(5);
    cancelledFirst.cancel();
    Strict late = new Strict();
    cancelledFirst.set(late);
    assertThat(late.requested).hasValue(0);
    assertThat(late.cancels).hasValue(1);
  }

  @Test
  void requestsAndCancelsFromManyThreads_neverCallTheSourceAtOnce_andNoDemandIsLost()
      throws Exception {
    for (int round = 0; round < 200; round++) {
      SerialSubscription d = new SerialSubscription();
      Strict s = new Strict();
      int threads = 4;
      CyclicBarrier start = new CyclicBarrier(threads + 1);
      Thread[] requesters = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        requesters[t] =
            new Thread(
                () -> {
                  try {
                    start.await();
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                  for (int i = 0; i < 500; i++) {
                    d.request(1);
                  }
                });
        requesters[t].start();
      }
      start.await();
      d.set(s);
      for (Thread t : requesters) {
        t.join(10_000);
      }
      assertThat(s.overlaps).as("round " + round).hasValue(0);
      assertThat(s.requested).as("round " + round).hasValue(threads * 500L);
      Thread canceller = new Thread(d::cancel);
      canceller.start();
      for (int i = 0; i < 100; i++) {
        d.request(1);
      }
      canceller.join(10_000);
      d.cancel();
      assertThat(s.overlaps).as("round " + round).hasValue(0);
      assertThat(s.cancels).as("cancelled once, round " + round).hasValue(1);
    }
  }

  @Test
  void demandSaturates_andASecondSourceIsCancelled() {
    SerialSubscription d = new SerialSubscription();
    d.request(Long.MAX_VALUE);
    d.request(Long.MAX_VALUE);
    Strict s = new Strict();
    d.set(s);
    assertThat(s.requested).hasValue(Long.MAX_VALUE);
    Strict second = new Strict();
    d.set(second);
    assertThat(second.cancels).hasValue(1);
    assertThat(s.cancels).hasValue(0);
  }
}
