package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

/**
 * The two serializers the bridges stand on, without sockets: {@link SerialSubscription} (rule 2.7:
 * the upstream is called from one thread at a time, and no demand or cancel is lost) and {@link
 * SerializingExecutor} (tasks one at a time, in order, and a task that throws does not stop those
 * after it).
 */
class SerialSubscriptionTest {

  /** An upstream that records overlapping calls and the demand it got. */
  private static final class Recording implements Subscription {
    final AtomicInteger inside = new AtomicInteger();
    final AtomicBoolean overlapped = new AtomicBoolean();
    final AtomicLong requested = new AtomicLong();
    final AtomicInteger cancels = new AtomicInteger();

    @Override
    public void request(long n) {
      enter();
      requested.addAndGet(n);
      Thread.onSpinWait();
      inside.decrementAndGet();
    }

    @Override
    public void cancel() {
      enter();
      cancels.incrementAndGet();
      inside.decrementAndGet();
    }

    private void enter() {
      if (inside.incrementAndGet() != 1) {
        overlapped.set(true);
      }
    }
  }

  @Test
  void demandFromManyThreads_reachesTheUpstreamWhole_oneCallAtATime() throws Exception {
    for (int round = 0; round < 20; round++) {
      SerialSubscription serial = new SerialSubscription();
      Recording upstream = new Recording();
      serial.request(5); // before the upstream arrives: kept
      int threads = 4;
      int each = 5_000;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      CountDownLatch go = new CountDownLatch(1);
      List<java.util.concurrent.Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < each; i++) {
                    serial.request(1);
                  }
                  return null;
                }));
      }
      go.countDown();
      serial.set(upstream); // arrives while the others ask
      for (var f : done) {
        f.get(10, TimeUnit.SECONDS);
      }
      pool.shutdown();
      assertThat(upstream.overlapped).as("calls overlapped in round " + round).isFalse();
      assertThat(upstream.requested.get()).isEqualTo(5 + (long) threads * each);
    }
  }

  @Test
  void aCancel_beforeTheUpstreamArrives_cancelsItOnArrival_andStopsDemand() {
    SerialSubscription serial = new SerialSubscription();
    Recording upstream = new Recording();
    serial.request(3);
    serial.cancel();
    serial.request(7);
    serial.set(upstream);
    assertThat(upstream.cancels.get()).isEqualTo(1);
    assertThat(upstream.requested.get()).isZero();
    serial.cancel();
    assertThat(upstream.cancels.get()).isEqualTo(1);
  }

  @Test
  void demandSaturatesInsteadOfOverflowing() {
    SerialSubscription serial = new SerialSubscription();
    serial.request(Long.MAX_VALUE);
    serial.request(Long.MAX_VALUE);
    Recording upstream = new Recording();
    serial.set(upstream);
    assertThat(upstream.requested.get()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void serializingExecutor_runsTasksInOrder_oneAtATime_pastOneThatThrows() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      SerializingExecutor serial = new SerializingExecutor(pool);
      AtomicInteger inside = new AtomicInteger();
      AtomicBoolean overlapped = new AtomicBoolean();
      List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
      CountDownLatch all = new CountDownLatch(1);
      int n = 10_000;
      for (int i = 0; i < n; i++) {
        int id = i;
        serial.execute(
            () -> {
              if (inside.incrementAndGet() != 1) {
                overlapped.set(true);
              }
              order.add(id);
              inside.decrementAndGet();
              if (id == 10) {
                throw new IllegalStateException("a listener that throws");
              }
              if (id == n - 1) {
                all.countDown();
              }
            });
      }
      assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(overlapped).isFalse();
      assertThat(order).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(order.get(i)).isEqualTo(i);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void serializingExecutor_whoseExecutorRefuses_stillRunsTheTasks() {
    Executor refusing =
        task -> {
          throw new java.util.concurrent.RejectedExecutionException("shut down");
        };
    SerializingExecutor serial = new SerializingExecutor(refusing);
    List<String> ran = new ArrayList<>();
    serial.execute(() -> ran.add("a"));
    serial.execute(() -> ran.add("b"));
    assertThat(ran).containsExactly("a", "b");
  }
}
