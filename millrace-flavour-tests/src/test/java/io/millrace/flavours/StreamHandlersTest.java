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
