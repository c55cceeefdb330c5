package io.millrace.streams.internal;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.locks.LockSupport;

/**
 * The waiting half of a queue read by one blocking thread and fed from event loops (or other
 * threads): the reader parks with {@link LockSupport}, so a virtual thread unmounts; a feeder never
 * waits.
 *
 * <p>A feeder on an event loop does not unpark the reader per item: it schedules one wake-up to run
 * after the loop's current batch of reads, so a reader that shares a core with the loop takes a
 * batch per wake-up. Waking it per item cost two context switches an item (0.65 M/s on one core for
 * the futures flavour's stream, 0.84 M/s for the RPC blocking iterator). A feeder elsewhere wakes
 * it at once.
 *
 * <p>No wake-up is lost: the reader publishes itself before its last look at the queue, and a
 * feeder adds to the queue before it looks for a reader, so one of the two sees the other.
 */
public final class ParkedReader {
  private static final AtomicIntegerFieldUpdater<ParkedReader> WAKE_SCHEDULED =
      AtomicIntegerFieldUpdater.newUpdater(ParkedReader.class, "wakeScheduled");

  /** The reader while it is parked waiting, else null. */
  private volatile Thread waiter;

  /** Whether a task that wakes the reader is pending on the event loop that fed it. */
  private volatile int wakeScheduled;

  private final Runnable wake = this::wakeNow;

  /** Tells a waiting reader that the queue has something: call after adding to it. */
  public void signal() {
    if (waiter == null) {
      return;
    }
    EventExecutor loop = ThreadExecutorMap.currentExecutor();
    if (loop == null) {
      wakeNow();
    } else if (wakeScheduled == 0 // read first: the rest of a batch of reads costs no CAS each
        && WAKE_SCHEDULED.compareAndSet(this, 0, 1)) {
      try {
        loop.execute(wake);
      } catch (RejectedExecutionException e) {
        wakeNow(); // the loop is shutting down
      }
    }
  }

  /** Wakes the reader that waits now, if any (one that woke by itself re-checks and parks). */
  public void wakeNow() {
    wakeScheduled = 0;
    Thread w = waiter;
    if (w != null) {
      LockSupport.unpark(w);
    }
  }

  /**
   * The queue's next entry, parking until there is one; the reader's thread only.
   *
   * @throws InterruptedException when the reader is interrupted while it waits (the flag cleared)
   */
  public <T> T take(Queue<T> queue) throws InterruptedException {
    T o = queue.poll();
    if (o != null) {
      return o;
    }
    waiter = Thread.currentThread();
    try {
      while ((o = queue.poll()) == null) {
        LockSupport.park(this);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
      return o;
    } finally {
      waiter = null;
    }
  }
}
