package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
  void onPlatformThreadsHandlersWaitingOnFuturesDoNotGrowThePoolPastItsCap() throws Exception {
    // A CompletableFuture.get() in a handler (a call to a service that hangs) asks a ForkJoinPool
    // for a spare thread; the pool's cap holds for those too, and the rest of the calls queue.
    HandlerPool pool = new HandlerPool("capped");
    CompletableFuture<Void> hangs = new CompletableFuture<>();
    try {
      int calls = Blocking.MAX_PLATFORM_HANDLERS + 200;
      for (int i = 0; i < calls; i++) {
        pool.execute(hangs::join);
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (pool.getPoolSize() < Blocking.MAX_PLATFORM_HANDLERS && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      Thread.sleep(200); // time for more threads, if any would come
      assertThat(pool.getPoolSize()).isEqualTo(Blocking.MAX_PLATFORM_HANDLERS);
    } finally {
      hangs.complete(null);
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
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

  @Test
  void onPlatformThreadsAnInterruptDoesNotLeakIntoTheNextHandler() throws Exception {
    HandlerPool pool = new HandlerPool("leak-test");
    try {
      AtomicInteger sawAnInterrupt = new AtomicInteger();
      Set<Thread> threads = ConcurrentHashMap.newKeySet();
      for (int i = 0; i < 500; i++) { // one at a time: the pool reuses its threads
        pool.submit(
                () -> {
                  threads.add(Thread.currentThread());
                  if (Thread.currentThread().isInterrupted()) {
                    sawAnInterrupt.incrementAndGet();
                  }
                  Thread.currentThread().interrupt(); // as a cancelled blocking call leaves it
                })
            .get(10, TimeUnit.SECONDS);
      }
      assertThat(threads.size()).as("threads were reused").isLessThan(500);
      assertThat(sawAnInterrupt.get()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void onPlatformThreadsAThrowingHandlerIsReportedAndThePoolGoesOn() throws Exception {
    HandlerPool pool = new HandlerPool("throw-test");
    try {
      Set<Throwable> reported = ConcurrentHashMap.newKeySet();
      CountDownLatch thrown = new CountDownLatch(1);
      pool.execute(
          () -> {
            Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
            thrown.countDown();
            throw new IllegalStateException("handler bug");
          });
      assertThat(thrown.await(10, TimeUnit.SECONDS)).isTrue();
      CountDownLatch after = new CountDownLatch(100);
      for (int i = 0; i < 100; i++) {
        pool.execute(after::countDown);
      }
      assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(reported)
          .singleElement()
          .extracting(Throwable::getMessage)
          .isEqualTo("handler bug");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void onPlatformThreadsHandlersRunWithTheCreatorsContextClassLoader() throws Exception {
    ClassLoader mine = new ClassLoader(getClass().getClassLoader()) {};
    ClassLoader before = Thread.currentThread().getContextClassLoader();
    HandlerPool pool;
    Thread.currentThread().setContextClassLoader(mine);
    try {
      pool = new HandlerPool("loader-test");
    } finally {
      Thread.currentThread().setContextClassLoader(before);
    }
    try {
      assertThat(
              pool.submit(() -> Thread.currentThread().getContextClassLoader())
                  .get(10, TimeUnit.SECONDS))
          .isSameAs(mine);
    } finally {
      pool.shutdownNow();
    }
  }
}
