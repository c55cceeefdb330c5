package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
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
    // A CompletableFuture.join() in a handler (a call to a service that hangs) blocks its thread,
    // and the pool adds threads for blocked handlers; the cap holds, and the rest of the calls
    // queue.
    HandlerPool pool = new HandlerPool("capped");
    CompletableFuture<Void> hangs = new CompletableFuture<>();
    try {
      int calls = Blocking.MAX_PLATFORM_HANDLERS + 200;
      for (int i = 0; i < calls; i++) {
        pool.execute(hangs::join);
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (pool.poolSize() < Blocking.MAX_PLATFORM_HANDLERS && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      Thread.sleep(200); // time for more threads, if any would come
      assertThat(pool.poolSize()).isEqualTo(Blocking.MAX_PLATFORM_HANDLERS);
    } finally {
      hangs.complete(null);
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aBacklogOfCallsThatDoNotBlock_startsNoThreadBeyondTheBase() throws Exception {
    // The pool before this one started a thread whenever a call came and none was idle, so a
    // backlog (a collection pause, a burst from one event-loop read) grew it by dozens of threads.
    int base = 2;
    HandlerPool pool = new HandlerPool("backlog", base, TimeUnit.MINUTES.toNanos(1));
    try {
      AtomicInteger ran = new AtomicInteger();
      int calls = 200_000;
      for (int round = 0; round < 4; round++) {
        CountDownLatch done = new CountDownLatch(calls);
        for (int i = 0; i < calls; i++) {
          pool.execute(
              () -> {
                ran.incrementAndGet();
                done.countDown();
              });
        }
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(ran.get()).isEqualTo(4 * calls);
      // A thread descheduled in a call for two samples looks blocked, so on a loaded machine
      // the pool may add one; never the dozens the busy backlog used to start.
      assertThat(pool.poolSize()).isBetween(1, 2 * base);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void handlersBlockedInARead_stillGetThreads_thoughJavaCallsThemRunnable() throws Exception {
    // A thread in a blocking read is RUNNABLE to Java; the kernel says it sleeps in the read.
    // With one base thread, the second and third calls run only if the pool adds threads while
    // the first never returns.
    HandlerPool pool = new HandlerPool("reading", 1, TimeUnit.MINUTES.toNanos(1));
    List<Pipe> pipes = new ArrayList<>();
    CountDownLatch reading = new CountDownLatch(3);
    try {
      for (int i = 0; i < 3; i++) {
        Pipe pipe = Pipe.open();
        pipes.add(pipe);
        pool.execute(
            () -> {
              reading.countDown();
              try {
                pipe.source().read(ByteBuffer.allocate(1));
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
      }
      assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      for (Pipe pipe : pipes) {
        pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      for (Pipe pipe : pipes) {
        pipe.source().close();
        pipe.sink().close();
      }
    }
  }

  @Test
  void theKernelSaysAThreadSleepsInARead_butNotWhenParkedOrComputing() throws Exception {
    assumeTrue(KernelThreads.AVAILABLE);
    Pipe pipe = Pipe.open();
    AtomicInteger reader = new AtomicInteger();
    AtomicInteger parker = new AtomicInteger();
    AtomicInteger spinner = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    Thread reading =
        new Thread(
            () -> {
              reader.set(KernelThreads.currentId());
              try {
                pipe.source().read(ByteBuffer.allocate(1));
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    Thread parked =
        new Thread(
            () -> {
              parker.set(KernelThreads.currentId());
              while (!stop.get()) {
                LockSupport.park();
              }
            });
    Thread computing =
        new Thread(
            () -> {
              spinner.set(KernelThreads.currentId());
              while (!stop.get()) {
                Thread.onSpinWait();
              }
            });
    List<Thread> threads = List.of(reading, parked, computing);
    threads.forEach(Thread::start);
    try {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!KernelThreads.asleepOutsideFutex(reader.get()) && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      assertThat(KernelThreads.asleepOutsideFutex(reader.get())).as("in a read").isTrue();
      while (parked.getState() != Thread.State.WAITING && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      Thread.sleep(20);
      assertThat(KernelThreads.asleepOutsideFutex(parker.get())).as("parked: a futex").isFalse();
      assertThat(spinner.get()).isPositive();
      assertThat(KernelThreads.asleepOutsideFutex(spinner.get())).as("on a core").isFalse();
    } finally {
      stop.set(true);
      LockSupport.unpark(parked);
      pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
      for (Thread t : threads) {
        t.join(10_000);
      }
      pipe.source().close();
      pipe.sink().close();
    }
  }

  @Test
  void aCallThatComputes_getsNoSpareThread() throws Exception {
    // More threads would not make computing faster. (Where the kernel's thread states cannot be
    // read, a call running this long counts as blocked, so this holds only on Linux.)
    assumeTrue(KernelThreads.AVAILABLE);
    HandlerPool pool = new HandlerPool("computing", 1, TimeUnit.MINUTES.toNanos(1));
    AtomicBoolean release = new AtomicBoolean();
    CountDownLatch computing = new CountDownLatch(1);
    CountDownLatch second = new CountDownLatch(1);
    try {
      pool.execute(
          () -> {
            computing.countDown();
            while (!release.get()) {
              Thread.onSpinWait(); // RUNNABLE and on a core, or waiting for one
            }
          });
      assertThat(computing.await(10, TimeUnit.SECONDS)).isTrue();
      pool.execute(second::countDown);
      assertThat(second.await(300, TimeUnit.MILLISECONDS))
          .as("the queued call waits for the one thread")
          .isFalse();
      assertThat(pool.poolSize()).isEqualTo(1);
    } finally {
      release.set(true);
      assertThat(second.await(10, TimeUnit.SECONDS)).isTrue();
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void withoutTheWatchdog_everyCallIsHandedToAThread_oneAtATimeAndInBursts() throws Exception {
    // The watchdog wakes idle threads for calls left queued; slowed to once an hour here, a lost
    // wake-up in the hand-off would leave a call queued and this test waiting.
    HandlerPool pool =
        new HandlerPool("hand-off", 4, TimeUnit.MINUTES.toNanos(1), TimeUnit.HOURS.toNanos(1));
    try {
      for (int i = 0; i < 2_000; i++) { // the threads park between calls: each needs a wake-up
        CountDownLatch ran = new CountDownLatch(1);
        pool.execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).as("call %d", i).isTrue();
      }
      for (int burst = 0; burst < 200; burst++) {
        CountDownLatch ran = new CountDownLatch(64);
        for (int i = 0; i < 64; i++) {
          pool.execute(ran::countDown);
        }
        assertThat(ran.await(10, TimeUnit.SECONDS)).as("burst %d", burst).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void withoutTheWatchdog_aCallIsHandedOverWhileAnotherBlocks_fromTwoCallers() throws Exception {
    // Call A blocks until call B has run, so B needs the second thread while A holds the first;
    // two callers race. A wake-up lost in the hand-off would leave B queued and A waiting.
    HandlerPool pool =
        new HandlerPool("two-callers", 2, TimeUnit.MINUTES.toNanos(1), TimeUnit.HOURS.toNanos(1));
    ExecutorService callers = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 2_000; round++) {
        CountDownLatch bRan = new CountDownLatch(1);
        CountDownLatch aDone = new CountDownLatch(1);
        CyclicBarrier together = new CyclicBarrier(2);
        callers.execute(
            () -> {
              awaitQuietly(together);
              pool.execute(
                  () -> {
                    awaitQuietly(bRan);
                    aDone.countDown();
                  });
            });
        callers.execute(
            () -> {
              awaitQuietly(together);
              pool.execute(bRan::countDown);
            });
        assertThat(aDone.await(10, TimeUnit.SECONDS)).as("round %d", round).isTrue();
      }
    } finally {
      callers.shutdownNow();
      pool.shutdownNow();
    }
  }

  private static void awaitQuietly(CyclicBarrier barrier) {
    try {
      barrier.await();
    } catch (InterruptedException | BrokenBarrierException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void shutdownWhileCallsArrive_terminatesWhateverTheInterleaving() throws Exception {
    // A call rejected after it was queued must not leave shutdown waiting for it.
    for (int round = 0; round < 200; round++) {
      HandlerPool pool = new HandlerPool("racing", 1, TimeUnit.MINUTES.toNanos(1));
      CountDownLatch submitting = new CountDownLatch(1);
      Thread caller =
          new Thread(
              () -> {
                submitting.countDown();
                try {
                  while (true) {
                    pool.execute(() -> {});
                  }
                } catch (RejectedExecutionException expected) {
                  // shut down
                }
              });
      caller.start();
      submitting.await();
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("round %d", round).isTrue();
      caller.join(10_000);
      assertThat(caller.isAlive()).isFalse();
    }
  }

  @Test
  void threadsStartedForBlockedHandlers_endAfterTheKeepAlive() throws Exception {
    int base = 1;
    HandlerPool pool = new HandlerPool("ageing", base, TimeUnit.MILLISECONDS.toNanos(100));
    try {
      CountDownLatch running = new CountDownLatch(8);
      CountDownLatch release = new CountDownLatch(1);
      for (int i = 0; i < 8; i++) {
        pool.execute(
            () -> {
              running.countDown();
              awaitQuietly(release);
            });
      }
      assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(pool.poolSize()).isGreaterThanOrEqualTo(8);
      release.countDown();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (pool.poolSize() > base && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      assertThat(pool.poolSize()).isEqualTo(base);
      CountDownLatch after = new CountDownLatch(100);
      for (int i = 0; i < 100; i++) {
        pool.execute(after::countDown);
      }
      assertThat(after.await(10, TimeUnit.SECONDS)).as("the base thread still serves").isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shutdown_runsTheQueuedCalls_rejectsNewOnes_andTerminates() throws Exception {
    HandlerPool pool = new HandlerPool("shutdown", 1, TimeUnit.MINUTES.toNanos(1));
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 6; i++) {
      pool.execute(
          () -> {
            awaitQuietly(release);
            ran.incrementAndGet();
          });
    }
    pool.shutdown();
    assertThat(pool.isShutdown()).isTrue();
    assertThatThrownBy(() -> pool.execute(ran::incrementAndGet))
        .isInstanceOf(RejectedExecutionException.class);
    assertThat(pool.isTerminated()).isFalse();
    release.countDown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.isTerminated()).isTrue();
    assertThat(ran.get()).isEqualTo(6);
    assertThat(pool.poolSize()).isZero();
  }

  @Test
  void shutdownNow_interruptsTheRunningCalls_andReturnsTheQueuedOnes() throws Exception {
    HandlerPool pool = new HandlerPool("shutdown-now", 1, TimeUnit.MINUTES.toNanos(1));
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    pool.execute(
        () -> {
          started.countDown();
          try {
            Thread.sleep(60_000);
          } catch (InterruptedException e) {
            interrupted.incrementAndGet();
          }
        });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    CountDownLatch never = new CountDownLatch(1);
    for (int i = 0; i < 3; i++) {
      pool.execute(
          () -> {
            ran.incrementAndGet();
            awaitQuietly(never); // ends by shutdownNow's interrupt, if a thread took it
          });
    }
    List<Runnable> queued = pool.shutdownNow();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(interrupted.get()).isEqualTo(1);
    // The watchdog may have started threads for the queued calls before shutdownNow.
    assertThat(queued.size() + ran.get()).isEqualTo(3);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void virtualThreadsWhereTheJdkHasThem_elseAHandlerPoolOfNamedDaemonThreads()
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
      assertThat(handlers).isInstanceOf(HandlerPool.class);
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
            Thread.currentThread()
                .setUncaughtExceptionHandler(
                    (t, e) -> {
                      reported.add(e);
                      thrown.countDown();
                    });
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
