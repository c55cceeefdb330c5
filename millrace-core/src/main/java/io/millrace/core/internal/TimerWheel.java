package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One hashed timer wheel per event loop, shared by all the connections on it: {@link #SLOTS} slots
 * of {@link #TICK_NANOS} each, driven by a single task on the loop that runs once a tick while any
 * timeout is scheduled.
 *
 * <p>Why. A Netty scheduled task per connection and timer costs an object per schedule and an O(log
 * n) priority-queue operation, and a liveness check every second on each of 19,000 idle connections
 * kept a core 11% busy. Here a timeout is an intrusive list node owned by its connection:
 * scheduling, moving and cancelling are O(1) and allocate nothing, and an idle connection's
 * liveness check runs only when its deadline comes (about once per max lifetime).
 *
 * <p>Precision: a slot is visited once its tick has fully passed, so a timeout runs at most two
 * ticks (100 ms) after its deadline, later only if the loop is busy; never before it. A deadline
 * more than a rotation ({@code SLOTS * TICK}, 51 s) away stays in its slot and is passed over on
 * earlier rotations. Event loop only.
 */
final class TimerWheel implements Timers {
  static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  static final int SLOTS = 1024;

  private static final FastThreadLocal<TimerWheel> WHEELS = new FastThreadLocal<>();

  private final EventExecutor executor;
  private final Timeout[] heads = new Timeout[SLOTS];
  private final Runnable tickTask = this::tick;
  private int scheduled;
  private long processedTick;
  private ScheduledFuture<?> ticker;
  private Timeout cursor;

  private TimerWheel(EventExecutor executor) {
    this.executor = executor;
    this.processedTick = tickOf(System.nanoTime());
  }

  /** The wheel of the loop that calls this: created on first use. Event loop only. */
  static TimerWheel forLoop(EventExecutor executor) {
    if (!executor.inEventLoop()) {
      throw new IllegalStateException("timer wheels are per event loop: call on the loop");
    }
    TimerWheel wheel = WHEELS.get();
    if (wheel == null || wheel.executor != executor) {
      wheel = new TimerWheel(executor);
      WHEELS.set(wheel);
    }
    return wheel;
  }

  private static long tickOf(long nanos) {
    return Math.floorDiv(nanos, TICK_NANOS);
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public void schedule(Timeout timeout, long deadlineNanos) {
    if (timeout.isScheduled()) {
      unlink(timeout);
    }
    if (scheduled == 0) {
      // The wheel was idle: nothing between the last processed tick and now needs visiting.
      processedTick = Math.max(processedTick, tickOf(System.nanoTime()) - 1);
    }
    timeout.deadlineNanos = deadlineNanos;
    // A deadline in a tick already processed goes into the next tick's slot.
    long tick = Math.max(tickOf(deadlineNanos), processedTick + 1);
    int slot = (int) (tick & (SLOTS - 1));
    timeout.slot = slot;
    timeout.prev = null;
    timeout.next = heads[slot];
    if (timeout.next != null) {
      timeout.next.prev = timeout;
    }
    heads[slot] = timeout;
    if (scheduled++ == 0 && ticker == null) {
      ticker = executor.scheduleAtFixedRate(tickTask, TICK_NANOS, TICK_NANOS, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public void cancel(Timeout timeout) {
    if (timeout.isScheduled()) {
      unlink(timeout);
    }
  }

  private void unlink(Timeout timeout) {
    if (timeout == cursor) {
      cursor = timeout.next; // runDue is walking this list: keep its place valid
    }
    if (timeout.prev == null) {
      heads[timeout.slot] = timeout.next;
    } else {
      timeout.prev.next = timeout.next;
    }
    if (timeout.next != null) {
      timeout.next.prev = timeout.prev;
    }
    timeout.prev = null;
    timeout.next = null;
    timeout.slot = -1;
    if (--scheduled == 0 && ticker != null) {
      ticker.cancel(false);
      ticker = null;
    }
  }

  private void tick() {
    long now = System.nanoTime();
    // Only ticks that have fully passed: every deadline in their slots (this round) is due.
    long current = tickOf(now) - 1;
    // Visit every slot whose tick has come since the last run (all of them after a long stall).
    long from = Math.max(processedTick + 1, current - SLOTS + 1);
    for (long t = from; t <= current && scheduled > 0; t++) {
      processedTick = t;
      runDue((int) (t & (SLOTS - 1)), now);
    }
    processedTick = current;
  }

  /**
   * Runs the due timeouts of one slot. An expiring timeout may schedule or cancel any other, so the
   * walk keeps its next node in {@link #cursor}, which {@link #unlink} moves on when that node
   * leaves the list; timeouts scheduled meanwhile go to a slot's head and wait for their tick.
   */
  private void runDue(int slot, long now) {
    Timeout timeout = heads[slot];
    while (timeout != null) {
      cursor = timeout.next;
      if (timeout.deadlineNanos - now <= 0) {
        unlink(timeout);
        timeout.expire(now);
      }
      timeout = cursor;
    }
    cursor = null;
  }
}
