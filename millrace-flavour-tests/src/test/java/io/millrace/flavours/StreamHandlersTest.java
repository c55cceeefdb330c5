package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.observer.internal.StreamHandlers;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/** The executor the StreamObserver flavour runs stream handlers on when given none. */
class StreamHandlersTest {

  @Test
  void thePlatformPoolRefusesPastItsCap_reusesIdleThreads_andMakesNamedDaemons() throws Exception {
    ThreadPoolExecutor pool = StreamHandlers.platformPool(2);
    try {
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch running = new CountDownLatch(2);
      Set<Thread> threads = ConcurrentHashMap.newKeySet();
      Runnable held =
          () -> {
            threads.add(Thread.currentThread());
            running.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
      pool.execute(held);
      pool.execute(held);
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      // Both threads wait (for a slow peer, say): a third handler is refused, not queued.
      assertThatThrownBy(() -> pool.execute(() -> {}))
          .isInstanceOf(RejectedExecutionException.class);
      release.countDown();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (pool.getActiveCount() > 0 && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      CountDownLatch ran = new CountDownLatch(1);
      pool.execute(
          () -> {
            threads.add(Thread.currentThread());
            ran.countDown();
          });
      assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(threads).as("an idle thread took the next handler").hasSize(2);
      assertThat(threads)
          .allSatisfy(
              t -> {
                assertThat(t.isDaemon()).isTrue();
                assertThat(t.getName()).startsWith("millrace-observer-");
              });
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A connection's share of the pool: past it that connection's next handler is refused, while
   * another connection's still runs; a handler that ends gives its place back.
   */
  @Test
  void aConnectionsShareRefusesPastItsMax_othersStillRun_andPlacesComeBack() throws Exception {
    ThreadPoolExecutor pool = StreamHandlers.platformPool(8);
    try {
      StreamHandlers.Share one = new StreamHandlers.Share(pool, 2);
      StreamHandlers.Share other = new StreamHandlers.Share(pool, 2);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch running = new CountDownLatch(2);
      Runnable held =
          () -> {
            running.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
      one.execute(held);
      one.execute(held);
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> one.execute(() -> {}))
          .isInstanceOf(RejectedExecutionException.class)
          .hasMessageContaining("2 stream handlers");
      CountDownLatch otherRan = new CountDownLatch(1);
      other.execute(otherRan::countDown);
      assertThat(otherRan.await(10, TimeUnit.SECONDS)).as("another connection's").isTrue();
      release.countDown();
      CountDownLatch again = new CountDownLatch(1);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (again.getCount() > 0 && System.nanoTime() < until) {
        try {
          one.execute(again::countDown);
        } catch (RejectedExecutionException e) {
          Thread.sleep(5); // the held ones are still ending
        }
      }
      assertThat(again.await(10, TimeUnit.SECONDS)).as("a place came back").isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Connections past their first few handlers stop short of the pool's last threads, which are kept
   * for connections running few: two that each run many cannot have a third's refused.
   */
  @Test
  void thePoolsLastThreadsAreKeptForConnectionsRunningFew() throws Exception {
    ThreadPoolExecutor pool = StreamHandlers.platformPool(16);
    CountDownLatch release = new CountDownLatch(1);
    try {
      // Past 6 running in all, only a connection running fewer than 2 gets another.
      StreamHandlers.Budget budget = new StreamHandlers.Budget(6, 2);
      StreamHandlers.Share greedy = new StreamHandlers.Share(pool, 5, budget);
      StreamHandlers.Share alsoGreedy = new StreamHandlers.Share(pool, 5, budget);
      StreamHandlers.Share modest = new StreamHandlers.Share(pool, 5, budget);
      java.util.concurrent.atomic.AtomicInteger started =
          new java.util.concurrent.atomic.AtomicInteger();
      Runnable held =
          () -> {
            started.incrementAndGet();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
      for (int i = 0; i < 5; i++) {
        greedy.execute(held); // 5 in all
      }
      alsoGreedy.execute(held); // 6
      alsoGreedy.execute(held); // 7: its second, within its first 2
      assertThatThrownBy(() -> alsoGreedy.execute(held))
          .as("its third, past 6 in all")
          .isInstanceOf(RejectedExecutionException.class)
          .hasMessageContaining("kept for connections running fewer than 2");
      modest.execute(held); // 8
      modest.execute(held); // 9
      assertThatThrownBy(() -> modest.execute(held)).isInstanceOf(RejectedExecutionException.class);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (started.get() < 9 && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      assertThat(started).as("the nine accepted are running").hasValue(9);
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void whereTheJdkHasVirtualThreads_eachHandlerGetsOne() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    boolean[] virtual = new boolean[1];
    StreamHandlers.shared()
        .execute(
            () -> {
              try { // Thread.isVirtual, from JDK 21 (this compiles for 17)
                virtual[0] =
                    (Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread());
              } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
              }
              ran.countDown();
            });
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(virtual[0]).isTrue();
  }
}
