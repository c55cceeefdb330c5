package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Continues work on an event loop after the loop has polled its sockets again, for work that has
 * used up its share of a turn and must let the loop's other connections read.
 *
 * <p>{@code execute()} does not do that on Netty 4.2: its loops run tasks for up to a second
 * ({@code io.netty.eventLoop.maxTaskProcessingQuantumMs}, the clock read every 64 tasks) before the
 * next poll, and a task added by a running task runs in that same pass. A task that went on by
 * executing itself again kept the loop from every socket for that second: a stream from a
 * synchronous, unbounded Publisher to a peer that kept up delayed the requests of every other
 * connection on its loop by about a second each (docs/design.md, "Fair turns"). A task scheduled
 * with no delay waits in the loop's scheduled queue, which is moved to the task queue only when a
 * pass begins, after the poll; a due scheduled task also keeps the poll from blocking.
 *
 * <p>A loop that shuts down cancels its scheduled tasks instead of running them; work that must
 * still run then (a hand-off drain that fails the calls it holds) goes on as a plain task, or on
 * the shutting-down loop's own thread when even that is refused.
 */
final class IoYield {
  private IoYield() {}

  /**
   * Runs {@code task} on {@code loop}, the caller's own, after its next poll of I/O: as a plain
   * task when the loop is shutting down or cannot schedule. Returns false, without running it, only
   * when the loop refused it outright.
   */
  static boolean afterIo(EventExecutor loop, Runnable task) {
    if (!loop.isShuttingDown()) {
      try {
        loop.schedule(task, 0, TimeUnit.NANOSECONDS)
            .addListener(
                f -> {
                  if (f.isCancelled()) {
                    runSoon(loop, task); // cancelled by the loop's shutdown
                  }
                });
        return true;
      } catch (RejectedExecutionException | UnsupportedOperationException e) {
        // shutting down after all, or an executor without a schedule: a plain task then
      }
    }
    try {
      loop.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** From the loop's shutdown, which cancelled the scheduled task: it still runs. */
  private static void runSoon(EventExecutor loop, Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      task.run(); // the listener runs on the loop's own thread: no task will come after this
    }
  }
}
