package io.millrace.streams.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * Runs a drain on the event loop: at once when signalled there, otherwise as one task that covers
 * every signal made before it runs (a burst from another thread costs one wake-up).
 *
 * <p>A base class rather than a helper object, so that a call's publisher or sink is one object,
 * not five (the helper, its task, its flag and two method references): on a short stream that is
 * most of what each call allocates. {@link #run()} is the drain task itself. Public for the RPC
 * module's stream reader, which keeps its signals on the loop the same way.
 */
public abstract class LoopDrain implements Runnable {
  protected final EventExecutor loop;
  private volatile int scheduled;

  private static final AtomicIntegerFieldUpdater<LoopDrain> SCHEDULED =
      AtomicIntegerFieldUpdater.newUpdater(LoopDrain.class, "scheduled");

  protected LoopDrain(EventExecutor loop) {
    this.loop = loop;
  }

  /** Does the work; on the loop only, never reentered from {@link #signal()}'s own call. */
  protected abstract void drain();

  /**
   * Runs on the signalling thread, for every signal, once the loop has shut down: it must be
   * thread-safe and idempotent (it releases what later signals left behind).
   */
  protected abstract void loopGone();

  /** Asks for a drain: now when on the loop, else as the one task pending. Any thread. */
  protected final void signal() {
    if (loop.inEventLoop()) {
      drain();
    } else if (scheduled == 0 && SCHEDULED.compareAndSet(this, 0, 1)) {
      // (read first: while a drain is pending, as it is for most of a burst from another thread,
      // a failed compare-and-set would still cost a locked instruction per signal)
      try {
        loop.execute(this);
      } catch (RejectedExecutionException e) {
        scheduled = 0; // no task will run: the next signal must come here too
        loopGone();
        return;
      }
      if (loop.isShutdown()) {
        // Taken as the loop shut down: Netty may leave it unrun, without refusing it (an IO
        // loop's task queue cannot take a task back), and then no later signal would come here
        // either. Once the loop has ended, whatever the task did or did not do is done here.
        loop.terminationFuture()
            .addListener(
                f -> {
                  scheduled = 0;
                  loopGone();
                });
      }
    }
  }

  /** The drain task; not for callers. */
  @Override
  public final void run() {
    scheduled = 0;
    drain();
  }
}
