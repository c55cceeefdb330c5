package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Continues work on an event loop after the loop has polled its sockets again, for work that has
 * used up its share of a turn and must let the loop's other connections read.
 *
 * <p>{@code execute()} does not do that on Netty 4.2: its loops run tasks for up to a second
 * ({@code io.netty.eventLoop.maxTaskProcessingQuantumMs}, checked every 64 tasks) before the next
 * poll, and a task added by a running task runs in that same pass. A task that goes on by executing
 * itself again kept the loop from every socket for that second: a stream from a synchronous,
 * unbounded Publisher to a peer that kept up delayed the requests of every other connection on its
 * loop by about a second each (docs/design.md, "Fair turns"). A task scheduled with no delay waits
 * in the loop's scheduled queue, which is moved to the task queue only when a pass begins, after
 * the poll; a due scheduled task also keeps the poll from blocking.
 */
final class IoYield {
  private IoYield() {}

  /**
   * Runs {@code task} on {@code loop}, the caller's own, after its next poll of I/O. Returns false
   * when the loop refused it (it is shutting down): the task will not run.
   */
  static boolean afterIo(EventExecutor loop, Runnable task) {
    try {
      loop.schedule(task, 0, TimeUnit.NANOSECONDS);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }
}
