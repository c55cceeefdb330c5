package io.millrace.core.internal;

import io.millrace.testing.TrackingAllocator;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A real single-thread event loop for engine tests, with blocking helpers that time out, and the
 * tracking allocator the engines under test allocate from: {@link #close()} fails the test when any
 * buffer an engine allocated is still referenced.
 */
final class TestLoop implements AutoCloseable {
  final DefaultEventExecutor executor = new DefaultEventExecutor();
  final TrackingAllocator alloc = new TrackingAllocator();

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
      if (e.getCause() instanceof Error) {
        throw (Error) e.getCause();
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

  /**
   * Stops the loop, then checks every buffer the engines allocated was released. A test that ends
   * with a connection still open has its open streams' buffers released by closing it first.
   */
  @Override
  public void close() {
    try {
      if (!executor.isShuttingDown()) {
        drain();
      }
    } finally {
      executor.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
    alloc.assertAllReleased();
  }
}
