package io.millrace.core.internal;

import io.millrace.frame.ErrorCode;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;

/**
 * Hands calls from other threads to a connection's event loop: one multi-producer queue per
 * connection, drained by one loop task that runs everything queued before it (one wake-up and one
 * flush for many calls), bounded in bytes, with a readiness signal producers can wait on or be
 * called back by.
 *
 * <p>Design. Producers add a call's weight to {@link #queuedBytes} first and back out when that
 * passes the bound, so memory is bounded whatever the producers do; a refused call releases its
 * buffers and throws. A producer that enqueues while no drain is pending ({@link #drainState} 0 to
 * 1, a CAS) schedules the drain task; the drain clears the flag before it checks the queue a last
 * time, so a call enqueued meanwhile either is drained in this run or schedules the next (no call
 * is left behind). The queue itself is Netty's copy of JCTools' MPSC linked-array queue, created on
 * the first call so an idle connection does not carry it.
 *
 * <p>When the loop refuses the drain task (it has shut down) the producer that holds the flag
 * drains on its own thread, failing every call: the flag makes it the only consumer.
 *
 * <p>Readiness: the queue is below half its bound, the transport is writable and the connection is
 * open. Waiters (callbacks and parked threads) are kept in a second MPSC queue and released by the
 * loop after each drain, when the transport becomes writable and when the connection closes. A
 * waiter registers, then checks readiness again, so a wake-up that happens in between is not lost.
 */
final class CallQueue {
  /** Bookkeeping charged per call on top of its payload, so empty calls count too. */
  static final long CALL_OVERHEAD = 64;

  /** A call from another thread, run on the loop or failed. */
  abstract static class Call {
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
  private static final VarHandle WAITERS;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      QUEUED_BYTES = lookup.findVarHandle(CallQueue.class, "queuedBytes", long.class);
      DRAIN_STATE = lookup.findVarHandle(CallQueue.class, "drainState", int.class);
      CALLS = lookup.findVarHandle(CallQueue.class, "calls", Queue.class);
      WAITERS = lookup.findVarHandle(CallQueue.class, "waiters", Queue.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ConnectionEngine engine;
  private final EventExecutor executor;
  private final long maxBytes;
  private final Runnable drainTask = this::drain;

  @SuppressWarnings("unused") // accessed through QUEUED_BYTES
  private volatile long queuedBytes;

  @SuppressWarnings("unused") // accessed through DRAIN_STATE
  private volatile int drainState;

  private volatile Queue<Call> calls;
  private volatile Queue<Runnable> waiters;

  CallQueue(ConnectionEngine engine, EventExecutor executor, long maxBytes) {
    this.engine = engine;
    this.executor = executor;
    this.maxBytes = maxBytes;
  }

  /**
   * Queues {@code call} for the loop. Throws {@link RejectedExecutionException} when the queue is
   * over its bound (after failing the call, which releases its buffers).
   */
  void offer(Call call) {
    long weight = call.bytes() + CALL_OVERHEAD;
    long after = (long) QUEUED_BYTES.getAndAdd(this, weight) + weight;
    if (after > maxBytes && !call.bypassesBound()) {
      QUEUED_BYTES.getAndAdd(this, -weight);
      call.release();
      throw new RejectedExecutionException(
          "calls waiting for the event loop exceed "
              + maxBytes
              + " bytes; wait for Connection.isReadyForCalls()");
    }
    queue(true).offer(call);
    scheduleDrain();
  }

  private void scheduleDrain() {
    if (DRAIN_STATE.compareAndSet(this, 0, 1)) {
      try {
        executor.execute(drainTask);
      } catch (RejectedExecutionException e) {
        drainOnThisThread();
      }
    }
  }

  /** Queued bytes (payload plus bookkeeping) right now. Any thread. */
  long queuedBytes() {
    return (long) QUEUED_BYTES.getVolatile(this);
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
    waiterQueue().offer(callback);
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
      waiterQueue().offer(parked);
      if (isReady() || !engine.isOpen()) {
        runOnLoop(this::releaseWaiters);
        continue;
      }
      while (!parked.released) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return isReady();
        }
        LockSupport.parkNanos(this, left);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
    }
  }

  /** Loop: releases the waiters if the connection is ready or closed. */
  void releaseWaitersIfReady() {
    if (waiters != null && (isReady() || !engine.isOpen())) {
      releaseWaiters();
    }
  }

  private void releaseWaiters() {
    Queue<Runnable> q = waiters;
    if (q == null) {
      return;
    }
    Runnable waiter;
    while ((waiter = q.poll()) != null) {
      try {
        waiter.run();
      } catch (RuntimeException e) {
        engine.logCallbackFailure("whenReadyForCalls callback", e);
      }
    }
  }

  /** Loop: runs every queued call, or fails them all once the connection has closed. */
  private void drain() {
    Queue<Call> q = calls;
    while (true) {
      Call call;
      while ((call = q.poll()) != null) {
        QUEUED_BYTES.getAndAdd(this, -(call.bytes() + CALL_OVERHEAD));
        if (engine.isOpen()) {
          try {
            call.run(engine);
          } catch (RuntimeException e) {
            engine.logCallbackFailure("call handed over to the event loop", e);
          }
        } else {
          call.fail(engine.closeCode(), engine.closeMessage());
        }
      }
      // Clear the flag, then look once more: a call offered before the clear is seen now, one
      // offered after it schedules the next drain.
      DRAIN_STATE.setVolatile(this, 0);
      if (q.isEmpty() || !DRAIN_STATE.compareAndSet(this, 0, 1)) {
        break;
      }
    }
    engine.afterHandOff();
    releaseWaitersIfReady();
  }

  /** The loop refused the drain: fail everything queued, on this thread (the only consumer). */
  private void drainOnThisThread() {
    Queue<Call> q = calls;
    Call call;
    while ((call = q.poll()) != null) {
      QUEUED_BYTES.getAndAdd(this, -(call.bytes() + CALL_OVERHEAD));
      call.fail(ErrorCode.CANCELED, "the connection's event loop has shut down");
    }
    DRAIN_STATE.setVolatile(this, 0);
    releaseWaiters();
  }

  /** Loop: the connection closed; fail what is queued now (later calls fail as they drain). */
  void onClosed() {
    if (calls != null && DRAIN_STATE.compareAndSet(this, 0, 1)) {
      drain();
    }
    releaseWaiters();
  }

  private Queue<Call> queue(boolean create) {
    Queue<Call> q = calls;
    if (q == null && create) {
      Queue<Call> created = PlatformDependent.newMpscQueue(64, 1 << 30);
      q = CALLS.compareAndSet(this, null, created) ? created : calls;
    }
    return q;
  }

  private Queue<Runnable> waiterQueue() {
    Queue<Runnable> q = waiters;
    if (q == null) {
      Queue<Runnable> created = PlatformDependent.newMpscQueue(16, 1 << 30);
      q = WAITERS.compareAndSet(this, null, created) ? created : waiters;
    }
    return q;
  }
}
