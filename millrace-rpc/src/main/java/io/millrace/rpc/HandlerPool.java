package io.millrace.rpc;

import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Blocking handlers' threads where the JDK has no virtual threads: a {@link ForkJoinPool} in FIFO
 * mode, so that a call handed over while earlier ones still wait costs a queue insert, and a thread
 * is woken (or started) only when the queue was empty. A cached thread pool wakes or starts a
 * thread for every call, which on JDK 17 held the futures flavour's request-response near
 * grpc-java's rate (docs/benchmarks.md, "The blocking flavour's hand-offs").
 *
 * <p>What differs from a plain ForkJoinPool, so that it behaves as a handler pool should: its
 * threads are daemons named {@code name-N} with the context class loader of the thread that made
 * the pool (the default factory would give them the system loader); a task's interrupt does not
 * leak into the next task on the same thread (a handler interrupted to cancel it keeps its flag, as
 * the library's blocking calls do; tasks given to {@code execute} or {@code submit}); what a task
 * given to {@code execute} throws goes to the thread's uncaught-exception handler and the thread
 * lives on; a thread that would block in {@link ForkJoinPool#managedBlock} (a {@code
 * CompletableFuture.get()}) beyond the most threads the pool may start blocks without a replacement
 * instead of throwing.
 *
 * <p>Threads are started as calls need them, up to {@link Blocking#MAX_PLATFORM_HANDLERS} threads
 * in all, spares for blocked handlers included (more calls wait their turn in the queue). A
 * ForkJoinPool lets idle threads go slowly: one per keep-alive period (a minute), and only while
 * the pool has nothing to do, so the threads of a burst of blocked handlers stay for a while after
 * it. A keep-alive of one second trimmed threads under load too and halved the futures flavour's
 * request-response rate, so the minute stays.
 */
final class HandlerPool extends ForkJoinPool {
  /**
   * The most threads, spares included: a handler waiting in {@code CompletableFuture.get()} asks
   * the pool for a spare, and with ForkJoinPool's own cap (32,767) a downstream service that hangs
   * made a thread per waiting call (found by a review; HandlerExecutorTest). At the cap such a wait
   * blocks without a spare, and further calls queue. The price: handlers that wait for calls served
   * by this same pool (a service calling another method of its own server) can all be waiting, at
   * the cap, for calls queued behind them, until their deadlines end them; bind such services to
   * separate executors.
   */
  private static final int MAX_THREADS = Blocking.MAX_PLATFORM_HANDLERS;

  HandlerPool(String name) {
    super(
        Blocking.MAX_PLATFORM_HANDLERS,
        factory(name, Thread.currentThread().getContextClassLoader()),
        null,
        true,
        0,
        MAX_THREADS,
        1,
        pool -> true,
        60,
        TimeUnit.SECONDS);
  }

  private static ForkJoinWorkerThreadFactory factory(String name, ClassLoader loader) {
    AtomicInteger threads = new AtomicInteger();
    return pool -> {
      ForkJoinWorkerThread t = defaultForkJoinWorkerThreadFactory.newThread(pool);
      t.setName(name + "-" + threads.incrementAndGet());
      t.setDaemon(true);
      t.setContextClassLoader(loader);
      return t;
    };
  }

  @Override
  public void execute(Runnable task) {
    super.execute(task instanceof ForkJoinTask<?> fjt ? fjt : new HandlerTask(task));
  }

  @Override
  public <T> ForkJoinTask<T> submit(Callable<T> task) {
    return super.submit(clearing(task));
  }

  @Override
  public <T> ForkJoinTask<T> submit(Runnable task, T result) {
    return super.submit(clearing(Executors.callable(task, result)));
  }

  @Override
  public ForkJoinTask<?> submit(Runnable task) {
    return super.submit(clearing(Executors.callable(task)));
  }

  private static <T> Callable<T> clearing(Callable<T> task) {
    return () -> {
      try {
        return task.call();
      } finally {
        Thread.interrupted();
      }
    };
  }

  /** One task: run, report what it throws, leave no interrupt behind. */
  private static final class HandlerTask extends ForkJoinTask<Void> {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial") // never serialized
    private final Runnable task;

    HandlerTask(Runnable task) {
      this.task = task;
    }

    @Override
    public Void getRawResult() {
      return null;
    }

    @Override
    protected void setRawResult(Void value) {}

    @Override
    protected boolean exec() {
      try {
        task.run();
      } catch (Throwable t) {
        Thread current = Thread.currentThread();
        current.getUncaughtExceptionHandler().uncaughtException(current, t);
      } finally {
        Thread.interrupted(); // the next task starts without this one's interrupt
      }
      return true;
    }
  }
}
