package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;

/**
 * Decides when the frames a connection writes are flushed to the transport. Writing never flushes:
 * frames written while the transport delivers a read batch are flushed once when the batch ends;
 * frames written at any other time (timers, calls handed over from other threads, producers woken
 * by writability) schedule a single flush task that runs after everything already queued on the
 * loop, so a burst of N writes costs one flush, not N.
 *
 * <p>Within a long batch the flusher also flushes every {@link #FLUSH_EVERY_WRITES} writes, as
 * Netty's FlushConsolidationHandler does: otherwise two busy peers fall into lockstep, each idle in
 * epoll_wait while the other works through one large batch (measured: request-channel ran both
 * sides at 60% CPU; 256 beat 1024 by 2x on request-response).
 *
 * <p>Event loop only.
 */
final class Flusher {
  /** Writes after which a batch is flushed even before it ends. */
  static final int FLUSH_EVERY_WRITES = 256;

  /**
   * Writes a connection's producers may make in one turn of the loop (one read batch, one task)
   * before {@link io.millrace.core.Stream#isReady()} asks them to yield: a stream that always has
   * credit and a writable socket would otherwise keep the loop, and every other connection on it,
   * until megabytes of socket buffers are full.
   */
  static final int WRITES_PER_TURN = 4096;

  private final EventExecutor executor;
  private final FrameWriter writer;
  private final Transport transport;
  private final Runnable flushTask = this::flushNow;
  private boolean reading;
  private boolean dirty;
  private boolean flushScheduled;
  private int unflushedWrites;
  private int writesThisTurn;

  Flusher(EventExecutor executor, FrameWriter writer, Transport transport) {
    this.executor = executor;
    this.writer = writer;
    this.transport = transport;
  }

  /** The transport started delivering a read batch: flushing waits for its end. */
  void beginRead() {
    reading = true;
  }

  /** The read batch ended: flush what it produced. */
  void endRead() {
    reading = false;
    writesThisTurn = 0;
    flushNow();
  }

  /** Writes in this turn so far. */
  int writesThisTurn() {
    return writesThisTurn;
  }

  /** Whether producers have used up this turn's writes and should yield. */
  boolean turnUsedUp() {
    return writesThisTurn >= WRITES_PER_TURN;
  }

  /** A new turn of the loop for this connection's producers. */
  void newTurn() {
    writesThisTurn = 0;
  }

  /** Called after every frame written. */
  void onWritten() {
    dirty = true;
    writesThisTurn++;
    if (++unflushedWrites >= FLUSH_EVERY_WRITES) {
      flushNow();
    } else if (!reading && !flushScheduled) {
      flushScheduled = true;
      executor.execute(flushTask);
    }
  }

  /** Flushes now if anything was written since the last flush. */
  void flushNow() {
    flushScheduled = false;
    if (dirty) {
      dirty = false;
      unflushedWrites = 0;
      writer.handOver();
      transport.flush();
    }
  }
}
