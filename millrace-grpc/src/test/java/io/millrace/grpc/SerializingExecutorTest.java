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
import org.junit.jupiter.api.Test;

/**
 * {@link SerializingExecutor} without sockets: tasks one at a time, in order, a task that throws
 * does not stop those after it, and a refusing executor does not wedge it.
 */
class SerializingExecutorTest {

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
