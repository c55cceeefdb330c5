package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HandlerExecutorTest {
  private final ExecutorService handlers = Blocking.newHandlerExecutor("test-handler");

  @AfterEach
  void shutDown() {
    handlers.shutdownNow();
  }

  @Test
  void manyHandlersBlockAtOnceWithoutHoldingEachOtherUp() throws InterruptedException {
    int blocked = 300; // far more than this machine's cores
    CountDownLatch allRunning = new CountDownLatch(blocked);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch finished = new CountDownLatch(blocked);
    for (int i = 0; i < blocked; i++) {
      handlers.execute(
          () -> {
            allRunning.countDown();
            try {
              release.await(); // a handler that waits, as a blocking one does
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            finished.countDown();
          });
    }
    assertThat(allRunning.await(30, TimeUnit.SECONDS))
        .as("every handler runs while the others are blocked")
        .isTrue();
    release.countDown();
    assertThat(finished.await(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void virtualThreadsWhereTheJdkHasThemElseAForkJoinPoolOfNamedDaemonThreads()
      throws InterruptedException {
    boolean virtualThreads = Runtime.version().feature() >= 21;
    Set<String> names = ConcurrentHashMap.newKeySet();
    Set<Boolean> daemons = ConcurrentHashMap.newKeySet();
    Set<String> kinds = ConcurrentHashMap.newKeySet();
    CountDownLatch ran = new CountDownLatch(100);
    for (int i = 0; i < 100; i++) {
      handlers.execute(
          () -> {
            names.add(Thread.currentThread().getName());
            daemons.add(Thread.currentThread().isDaemon());
            kinds.add(Thread.currentThread().getClass().getSimpleName());
            ran.countDown();
          });
    }
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    if (!virtualThreads) {
      assertThat(handlers).isInstanceOf(ForkJoinPool.class);
      assertThat(((ForkJoinPool) handlers).getParallelism())
          .isEqualTo(Blocking.MAX_PLATFORM_HANDLERS);
      assertThat(names).isNotEmpty().allMatch(n -> n.matches("test-handler-\\d+"));
      assertThat(daemons).containsExactly(true);
    } else {
      assertThat(kinds).containsExactly("VirtualThread");
    }
  }
}
