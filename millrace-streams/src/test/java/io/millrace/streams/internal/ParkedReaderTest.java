package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ParkedReaderTest {
  private final DefaultEventExecutor loop = new DefaultEventExecutor();
  private final Queue<Integer> queue = new ConcurrentLinkedQueue<>();
  private final ParkedReader waiting = new ParkedReader();

  @AfterEach
  void stop() {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Test
  void aBatchFedOnAnEventLoopWakesTheReaderOnceTheBatchEnds() throws Exception {
    AtomicInteger taken = new AtomicInteger();
    List<Integer> read = new ArrayList<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                for (int i = 0; i < 3; i++) {
                  read.add(waiting.take(queue));
                  taken.incrementAndGet();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    reader.start();
    awaitParked(reader);

    AtomicReference<Thread.State> duringTheBatch = new AtomicReference<>();
    AtomicInteger takenDuringTheBatch = new AtomicInteger(-1);
    loop.submit(
            () -> {
              for (int i = 0; i < 3; i++) {
                queue.offer(i);
                waiting.signal();
              }
              spin(50); // the rest of the loop's batch of reads (busy: the loop must not block)
              duringTheBatch.set(reader.getState());
              takenDuringTheBatch.set(taken.get());
            })
        .sync();
    reader.join(10_000);

    assertThat(takenDuringTheBatch.get()).as("nothing taken while the batch runs").isZero();
    assertThat(duringTheBatch.get()).isEqualTo(Thread.State.WAITING);
    assertThat(reader.isAlive()).isFalse();
    assertThat(read).containsExactly(0, 1, 2);
  }

  @Test
  void aFeederOffTheLoopWakesTheReaderAtOnce() throws Exception {
    CountDownLatch got = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try {
                waiting.take(queue);
                got.countDown();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    reader.start();
    awaitParked(reader);
    queue.offer(7);
    waiting.signal();
    assertThat(got.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void noWakeUpIsLostAcrossManyHandOffs() throws Exception {
    int n = 200_000;
    AtomicInteger sum = new AtomicInteger();
    Thread reader =
        new Thread(
            () -> {
              try {
                for (int i = 0; i < n; i++) {
                  sum.addAndGet(waiting.take(queue));
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    reader.start();
    for (int i = 0; i < n; i += 100) { // batches on the loop, with the reader racing them
      loop.execute(
          () -> {
            for (int j = 0; j < 100; j++) {
              queue.offer(1);
              waiting.signal();
            }
          });
    }
    reader.join(30_000);
    assertThat(reader.isAlive()).as("the reader got every item").isFalse();
    assertThat(sum.get()).isEqualTo(n);
  }

  @Test
  void anInterruptedReaderStopsWaiting() throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread reader =
        new Thread(
            () ->
                assertThatThrownBy(() -> waiting.take(queue))
                    .satisfies(thrown::set)
                    .isInstanceOf(InterruptedException.class));
    reader.start();
    awaitParked(reader);
    reader.interrupt();
    reader.join(10_000);
    assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
  }

  private static void awaitParked(Thread t) throws InterruptedException {
    for (int i = 0; i < 10_000 && t.getState() != Thread.State.WAITING; i++) {
      Thread.sleep(1);
    }
    assertThat(t.getState()).isEqualTo(Thread.State.WAITING);
  }

  private static void spin(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < end) {
      // busy
    }
  }
}
