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
   * Runs {@code task} on {@code loop}, the caller's own, after its next poll of I/O. When the loop
   * is shutting down, or cannot schedule, it runs as a plain task if {@code mustRun} (work that
   * fails what it holds once the connection is closed); otherwise it does not run (a producer's
   * next turn: the connection's close fails its producers, and a shutting-down loop would run plain
   * tasks that go on adding themselves without end). Returns false, without running it, when it
   * will not run.
   */
  static boolean afterIo(EventExecutor loop, Runnable task, boolean mustRun) {
    if (!loop.isShuttingDown()) {
      try {
        io.netty.util.concurrent.ScheduledFuture<?> f =
            loop.schedule(task, 0, TimeUnit.NANOSECONDS);
        if (mustRun) {
          f.addListener(
              done -> {
                if (done.isCancelled()) {
                  runSoon(loop, task); // cancelled by the loop's shutdown
                }
              });
        }
        return true;
      } catch (RejectedExecutionException | UnsupportedOperationException e) {
        // shutting down after all, or an executor without a schedule
      }
    }
    if (!mustRun) {
      return false;
    }
    try {
      loop.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * From the loop's shutdown, which cancelled the scheduled task: it still runs. Netty's loops
   * cancel their scheduled tasks on their own thread and notify on it; the task runs on that thread
   * only.
   */
  private static void runSoon(EventExecutor loop, Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      if (loop.inEventLoop()) {
        task.run(); // the loop's last pass: no task will come after this one
      }
    }
  }
}
