package io.millrace.core.internal;

import io.millrace.core.NoRoomException;
import io.millrace.frame.ErrorCode;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Hands calls from other threads to a connection's event loop: one multi-producer queue per
 * connection, drained by one loop task (one wake-up and one flush for many calls), bounded in
 * bytes, with a readiness signal producers can wait on or be called back by.
 *
 * <p>Design. Producers add a call's weight to {@link #queuedBytes} first and back out when that
 * passes the bound, so the queue's memory is bounded whatever the producers do; a refused call
 * releases its buffers and throws. A call is always taken when the queue is empty, however large,
 * so that a payload above the bound (legal on the loop, where it is fragmented) can still be sent
 * from another thread. Data calls are also refused while the peer does not read (the transport is
 * unwritable with more than {@code maxQueuedBytes} waiting for it): the same bound the engine
 * applies to a peer's requests, so a producer that ignores readiness cannot grow Netty's outbound
 * buffer either.
 *
 * <p>A producer that enqueues while no drain is pending ({@link #drainState} 0 to 1, a CAS)
 * schedules the drain task; the drain clears the flag before it checks the queue a last time, so a
 * call enqueued meanwhile either is drained in this run or schedules the next (no call is left
 * behind). One run takes at most {@link #CALLS_PER_DRAIN} calls and then reschedules itself still
 * holding the flag, so producers that keep up with the loop cannot keep it from reading its sockets
 * and running its timers. The queue is Netty's copy of JCTools' MPSC linked-array queue, created on
 * the first call so an idle connection does not carry it.
 *
 * <p>A small drain that follows another within {@link #TAKING_TURNS_NANOS} yields the loop's CPU
 * once before it lets go of the flag ({@link #smallDrainTakingTurns}): a producer sharing that CPU
 * then adds its calls without waking the loop for each, where the two otherwise took turns one call
 * at a time.
 *
 * <p>When the loop refuses the drain task (it has shut down) the producer that holds the flag
 * drains on its own thread, failing every call, with the same clear-and-check-again ending: the
 * flag makes it the only consumer.
 *
 * <p>Readiness: the queue is below half its bound, the transport is writable and the connection is
 * open. Waiters (callbacks and parked threads) wait in a {@link ConcurrentLinkedQueue} (a slow
 * path: it allocates a node, and a waiter that gives up can remove itself) and are released after
 * each drain, when the transport becomes writable and when the connection closes. A waiter
 * registers, then checks readiness again, so a wake-up that happens in between is not lost.
 */
final class CallQueue {
  private static final System.Logger LOG = System.getLogger(CallQueue.class.getName());

  /** Bookkeeping charged per call on top of its payload, so empty calls count too. */
  static final long CALL_OVERHEAD = 64;

  /** Calls one drain task runs before it lets the loop do other work. */
  static final int CALLS_PER_DRAIN = 4096;

  /**
   * Calls the drain runs before it gives their weight back to {@link #queuedBytes} in one atomic
   * update (and at the end of each run): producers see room a few calls late, the loop saves an
   * atomic per call.
   */
  static final int CALLS_PER_RELEASE = 64;

  /** A drain task that ran fewer calls than this did little: see {@link #smallDrainTakingTurns}. */
  static final int FEW_CALLS = 16;

  /** Two small drains closer than this mean the loop and a producer take turns: see there. */
  static final long TAKING_TURNS_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

  /** A call from another thread, run on the loop or failed. */
  abstract static class Call {
    /**
     * What the call was charged to {@link #queuedBytes} when it was queued, given back when it
     * leaves: fixed at {@link #offer}, so the bound's accounting cannot drift whatever happens to
     * the call's buffers meanwhile. An int, so that a two-buffer call stays a 24-byte object.
     */
    int weight;

    /** Payload bytes the call holds. */
    abstract long bytes();

    /** Runs on the loop. */
    abstract void run(ConnectionEngine engine);

    /** The call will never run: release what it holds and tell whoever waits for it. */
    abstract void fail(int errorCode, String message);

    /** The call was refused before it was queued: release what it holds, tell nobody. */
    abstract void release();

    /** Calls that must go through even when the queue is full (close, dispose). */
    boolean bypassesBound() {
      return false;
    }
  }

  /** A thread parked in {@link #awaitReady}. */
  private static final class ParkedThread implements Runnable {
    final Thread thread = Thread.currentThread();
    volatile boolean released;

    @Override
    public void run() {
      released = true;
      LockSupport.unpark(thread);
    }
  }

  private static final VarHandle QUEUED_BYTES;
  private static final VarHandle DRAIN_STATE;
  private static final VarHandle CALLS;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      QUEUED_BYTES = lookup.findVarHandle(CallQueue.class, "queuedBytes", long.class);
      DRAIN_STATE = lookup.findVarHandle(CallQueue.class, "drainState", int.class);
      CALLS = lookup.findVarHandle(CallQueue.class, "calls", Queue.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ConnectionEngine engine;
  private final EventExecutor executor;
  private final long maxBytes;
  private final long peerQueueBound;
  private final Runnable drainTask = this::drain;
  private final Queue<Runnable> waiters = new ConcurrentLinkedQueue<>();

  @SuppressWarnings("unused") // accessed through QUEUED_BYTES
  private volatile long queuedBytes;

  @SuppressWarnings("unused") // accessed through DRAIN_STATE
  private volatile int drainState;

  private volatile Queue<Call> calls;

  /** The loop's own task queue, to see that nothing else waits; null: not a Netty loop. */
  private final SingleThreadEventExecutor loopTasks;

  /** When the last small drain was seen (loop only); far in the past at first. */
  private long lastSmallDrainNanos = Long.MIN_VALUE / 2;

  /** False once a yield was refused (a BlockHound without this module's integration). */
  private boolean mayYield = true;

  /** Whether a refused yield was logged (racy by design: at worst logged a few times). */
  private static volatile boolean yieldRefusalLogged;

  /** How the loop lets a producer on its CPU run; the tests count it instead. */
  Runnable yieldToProducers = CallQueue::yieldCpu;

  CallQueue(ConnectionEngine engine, EventExecutor executor, long maxBytes, long peerQueueBound) {
    this.engine = engine;
    this.executor = executor;
    this.maxBytes = maxBytes;
    this.peerQueueBound = peerQueueBound;
    this.loopTasks =
        executor instanceof SingleThreadEventExecutor loop ? loop : null; // Netty's loops are
  }

  /**
   * Queues {@code call} for the loop. Throws {@link NoRoomException} when the queue is over its
   * bound or the peer is not reading (after releasing the call's buffers).
   */
  void offer(Call call) {
    int weight = (int) Math.min(call.bytes() + CALL_OVERHEAD, Integer.MAX_VALUE);
    call.weight = weight;
    if (!call.bypassesBound()) {
      if (!engine.transportWritable() && engine.transportQueuedBytes() > peerQueueBound) {
        call.release();
        throw new NoRoomException(
            "the peer is not reading: more than "
                + peerQueueBound
                + " bytes wait for it; wait for Connection.isReadyForCalls()");
      }
      long before = (long) QUEUED_BYTES.getAndAdd(this, (long) weight);
      if (before > 0 && before + weight > maxBytes) {
        QUEUED_BYTES.getAndAdd(this, (long) -weight);
        call.release();
        throw new NoRoomException(
            "calls waiting for the event loop exceed "
                + maxBytes
                + " bytes; wait for Connection.isReadyForCalls()");
      }
    } else {
      QUEUED_BYTES.getAndAdd(this, (long) weight);
    }
    queue().offer(call);
    scheduleDrain();
  }

  private void scheduleDrain() {
    // Read before the CAS: while a drain is pending (most calls, under load) a producer makes no
    // locked write to the flag's cache line, which the loop also reads. The read is volatile, after
    // the queue's own CAS, so the drain's clear-then-check-again still sees this call.
    if ((int) DRAIN_STATE.getVolatile(this) == 0 && DRAIN_STATE.compareAndSet(this, 0, 1)) {
      submitDrain();
    }
  }

  /** Runs the drain on the loop; the caller holds the flag. */
  private void submitDrain() {
    try {
      executor.execute(drainTask);
    } catch (RejectedExecutionException e) {
      drainOnThisThread();
    }
  }

  /** Queued bytes (payload plus bookkeeping) right now. Any thread. */
  long queuedBytes() {
    return (long) QUEUED_BYTES.getVolatile(this);
  }

  /** Whether a drain is scheduled or running (the flag is held); for the tests. */
  boolean drainPending() {
    return (int) DRAIN_STATE.getVolatile(this) != 0;
  }

  /** Readiness as {@link io.millrace.core.Connection#isReadyForCalls()} defines it. Any thread. */
  boolean isReady() {
    return queuedBytes() <= maxBytes / 2 && engine.isOpen() && engine.transportWritable();
  }

  /** Runs {@code callback} on the loop once ready (or closed). Any thread. */
  void whenReady(Runnable callback) {
    if (isReady() || !engine.isOpen()) {
      runOnLoop(callback);
      return;
    }
    waiters.offer(callback);
    if (isReady() || !engine.isOpen()) {
      runOnLoop(this::releaseWaiters); // it turned ready while registering
    }
  }

  private void runOnLoop(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      task.run(); // the loop is gone: nothing else would ever call it
    }
  }

  /** Parks the calling thread until ready, closed or {@code timeoutNanos} passed. */
  boolean awaitReady(long timeoutNanos) throws InterruptedException {
    if (executor.inEventLoop()) {
      throw new IllegalStateException("awaitReadyForCalls would block the event loop");
    }
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      if (isReady()) {
        return true;
      }
      if (!engine.isOpen()) {
        return false;
      }
      ParkedThread parked = new ParkedThread();
      waiters.offer(parked);
      if (isReady() || !engine.isOpen()) {
        waiters.remove(parked);
        continue;
      }
      while (!parked.released) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          waiters.remove(parked); // a waiter that gives up leaves nothing behind
          return isReady();
        }
        LockSupport.parkNanos(this, left);
        if (Thread.interrupted()) {
          waiters.remove(parked);
          throw new InterruptedException();
        }
      }
    }
  }

  /** Releases the waiters if the connection is ready or closed. Any thread. */
  void releaseWaitersIfReady() {
    if (!waiters.isEmpty() && (isReady() || !engine.isOpen())) {
      releaseWaiters();
    }
  }

  /** Runs every waiter once; safe from any thread (each poll hands a waiter to one caller). */
  private void releaseWaiters() {
    Runnable waiter;
    while ((waiter = waiters.poll()) != null) {
      try {
        waiter.run();
      } catch (RuntimeException e) {
        engine.logCallbackFailure("whenReadyForCalls callback", e);
      }
    }
  }

  /** Loop: runs the calls queued (at most {@link #CALLS_PER_DRAIN}), or fails them once closed. */
  private void drain() {
    Queue<Call> q = calls;
    int budget = CALLS_PER_DRAIN;
    long taken = 0; // weight of the calls taken and not yet given back
    boolean yielded = false;
    try {
      while (true) {
        Call call;
        while (budget > 0 && (call = q.poll()) != null) {
          taken += call.weight;
          if ((--budget & (CALLS_PER_RELEASE - 1)) == 0) {
            QUEUED_BYTES.getAndAdd(this, -taken);
            taken = 0;
          }
          if (engine.isOpen()) {
            try {
              call.run(engine);
            } catch (Throwable e) {
              Failures.throwIfFatal(e);
              engine.logCallbackFailure("call handed over to the event loop", e);
            }
          } else {
            failQuietly(call, engine.closeCode(), engine.closeMessage());
          }
        }
        if (taken != 0) {
          QUEUED_BYTES.getAndAdd(this, -taken);
          taken = 0;
        }
        if (budget == 0 && !q.isEmpty()) {
          // Still holding the flag: the rest runs after the loop's next poll (IoYield: a task
          // executed from here would run in this same pass of tasks, before any socket is read).
          if (!IoYield.afterIo(executor, drainTask, true)) {
            submitDrain(); // refused: the loop is going, and this fails what is left
          }
          return;
        }
        if (!yielded && smallDrainTakingTurns(CALLS_PER_DRAIN - budget)) {
          // Still holding the flag, so the producers add calls without waking the loop.
          yielded = true;
          engine.afterHandOff(); // what was drained goes out before the loop gives up its CPU
          releaseWaitersIfReady(); // a parked producer can use the turn too
          yieldCpuOnce();
          if (!q.isEmpty()) {
            continue;
          }
        }
        // Clear the flag, then look once more: a call offered before the clear is seen now, one
        // offered after it schedules the next drain.
        DRAIN_STATE.setVolatile(this, 0);
        if (q.isEmpty() || !DRAIN_STATE.compareAndSet(this, 0, 1)) {
          break;
        }
      }
    } catch (Throwable e) { // a bug here: never leave the flag set
      QUEUED_BYTES.getAndAdd(this, -taken);
      DRAIN_STATE.setVolatile(this, 0); // do not leave the queue stuck behind a dead flag
      throw e;
    } finally {
      engine.afterHandOff();
    }
    releaseWaitersIfReady();
  }

  /**
   * Whether this small drain ({@code ran}: at least one call, fewer than {@link #FEW_CALLS}; the
   * queue now empty) came within {@link #TAKING_TURNS_NANOS} of the last one, on an open connection
   * whose loop has no other task waiting: the loop and a producer are taking turns, one wake-up per
   * call or few. Loop only.
   *
   * <p>Why the drain then yields its CPU once, holding the flag. When a producer thread shares the
   * loop's CPU (a container with one or two CPUs, or the bench's client), the producer's first call
   * after the loop went to sleep wakes it, the scheduler lets the woken loop run at once, and the
   * loop drains that one call, flushes it and sleeps again: a wake-up, two context switches, an
   * {@code epoll_wait} and a socket write per call. Fire-and-forget from a Reactor thread ran
   * 301,000 one-call drains in 10 s (30,000 wake-ups a second, a fifth of the client's CPU) and 8.9
   * M/s; with this yield, 3,400 and 13.7 M/s (docs/benchmarks.md, "Forty-second session"). A yield
   * lets the producer run its turn, adding calls without waking anyone (the flag is held), and the
   * loop takes them all when it comes back. On a CPU of its own the yield returns at once: one
   * system call after a small drain, and only while calls come this close together. What this
   * connection drained is flushed before the yield, and the loop yields only when no other task
   * waits on it; but sockets that became readable meanwhile wait through the yield, so on a CPU
   * crowded with other runnable threads the loop may come back a scheduler turn (milliseconds)
   * later.
   */
  private boolean smallDrainTakingTurns(int ran) {
    if (ran == 0 || ran >= FEW_CALLS || !mayYield || loopTasks == null || !engine.isOpen()) {
      return false;
    }
    long now = engine.timers.nanoTime();
    boolean turns = now - lastSmallDrainNanos < TAKING_TURNS_NANOS;
    lastSmallDrainNanos = now;
    // Never ahead of other work on the loop: the only task allowed to wait is this connection's
    // own flush, which finds nothing to do once the drain has flushed.
    int own = engine.flusher.flushTaskPending() ? 1 : 0;
    return turns && loopTasks.pendingTasks() == own;
  }

  /** Yields once; a refusal (a blocking-call detector) turns yielding off for this queue. */
  private void yieldCpuOnce() {
    try {
      yieldToProducers.run();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (RuntimeException | Error e) {
      mayYield = false;
      if (!yieldRefusalLogged) {
        yieldRefusalLogged = true; // once per process: every connection would say the same
        LOG.log(
            System.Logger.Level.WARNING,
            "the hand-off's yield was refused; connections that see this stop yielding"
                + " (BlockHound without millrace-core's integration?)",
            e);
      }
    }
  }

  /**
   * The one place the loop yields its CPU ({@link #smallDrainTakingTurns}); BlockHound, which
   * counts a yield as blocking, is told this one is meant ({@link BlockHoundSupport}).
   */
  static void yieldCpu() {
    Thread.yield();
  }

  /**
   * The loop refused the drain: fail everything queued, on this thread (the only consumer while it
   * holds the flag), ending as {@link #drain} does so that a call offered meanwhile is not lost.
   */
  private void drainOnThisThread() {
    Queue<Call> q = calls;
    while (true) {
      Call call;
      while ((call = q.poll()) != null) {
        QUEUED_BYTES.getAndAdd(this, (long) -call.weight);
        failQuietly(call, ErrorCode.CANCELED, "the connection's event loop has shut down");
      }
      DRAIN_STATE.setVolatile(this, 0);
      if (q.isEmpty() || !DRAIN_STATE.compareAndSet(this, 0, 1)) {
        break;
      }
    }
    releaseWaiters();
  }

  /** Fails a call; its listener's exception is logged, so the calls behind it still end. */
  private void failQuietly(Call call, int errorCode, String message) {
    try {
      call.fail(errorCode, message);
    } catch (RuntimeException e) {
      engine.logCallbackFailure("a failed call's listener", e);
    }
  }

  /** Loop: the connection closed; fail what is queued now (later calls fail as they drain). */
  void onClosed() {
    if (calls != null && DRAIN_STATE.compareAndSet(this, 0, 1)) {
      drain();
    }
    releaseWaiters();
  }

  private Queue<Call> queue() {
    Queue<Call> q = calls;
    if (q == null) {
      Queue<Call> created = PlatformDependent.newMpscQueue(64, 1 << 30);
      q = CALLS.compareAndSet(this, null, created) ? created : calls;
    }
    return q;
  }
}
