package io.millrace.streams.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a drain on the event loop: at once when called there, otherwise as one task that covers
 * every signal made before it runs (a burst from another thread costs one wake-up).
 */
final class LoopDrain {
  private final EventExecutor loop;
  private final Runnable drain;
  private final Runnable loopGone;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final Runnable task = this::run;

  /**
   * {@code loopGone} runs on the signalling thread, for every signal, once the loop has shut down:
   * it must be thread-safe and idempotent (it releases what later signals left behind).
   */
  LoopDrain(EventExecutor loop, Runnable drain, Runnable loopGone) {
    this.loop = loop;
    this.drain = drain;
    this.loopGone = loopGone;
  }

  void signal() {
    if (loop.inEventLoop()) {
      drain.run();
    } else if (scheduled.compareAndSet(false, true)) {
      try {
        loop.execute(task);
      } catch (RejectedExecutionException e) {
        scheduled.set(false); // no task will run: the next signal must come here too
        loopGone.run();
      }
    }
  }

  private void run() {
    scheduled.set(false);
    drain.run();
  }
}
