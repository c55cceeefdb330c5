package io.millrace.core;

import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A real single-thread event loop for engine tests, with blocking helpers that time out. */
final class TestLoop implements AutoCloseable {
  final DefaultEventExecutor executor = new DefaultEventExecutor();

  /** Runs {@code task} on the loop and waits for it (and everything queued before it). */
  void run(Runnable task) {
    call(
        () -> {
          task.run();
          return null;
        });
  }

  <T> T call(Callable<T> task) {
    try {
      return executor.submit(task).get(5, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new AssertionError(e.getCause());
    } catch (InterruptedException | TimeoutException e) {
      throw new AssertionError("event loop task did not finish in time", e);
    }
  }

  /**
   * Waits until the loop is quiet: no task queued, including tasks that queued tasks enqueue (a
   * loopback exchange is a chain of them). Timers are not waited for. Bounded to 10,000 rounds.
   */
  void drain() {
    for (int i = 0; i < 10_000; i++) {
      if (call(() -> executor.pendingTasks() == 0)) {
        return;
      }
    }
    throw new AssertionError("the event loop never became quiet");
  }

  @Override
  public void close() {
    executor.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
