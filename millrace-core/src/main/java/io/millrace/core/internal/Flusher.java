package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Decides when the frames a connection writes are flushed to the transport. Writing never flushes:
 * frames written while the transport delivers a read batch are flushed once when the batch ends;
 * frames written at any other time (timers, calls handed over from other threads, producers woken
 * by writability) schedule a single flush task that runs after everything already queued on the
 * loop, so a burst of N writes costs one flush, not N.
 *
 * <p>Within a long read batch the flusher also flushes every {@link #FLUSH_EVERY_WRITES} writes, as
 * Netty's FlushConsolidationHandler does: otherwise two busy peers fall into lockstep, each idle in
 * epoll_wait while the other works through one large batch (measured: request-channel ran both
 * sides at 60% CPU; 256 beat 1024 by 2x on request-response).
 *
 * <p>Credit is the exception: the first REQUEST_N written in a read batch is flushed at once, with
 * everything the batch wrote before it ({@link #onCreditWritten}). The peer may have used up its
 * credit and be waiting for it, while this side still has the rest of the batch to work through; on
 * a channel, where both sides wait on each other's credit, the core and every flavour ran 9-22 %
 * faster with the early send (docs/benchmarks.md, twenty-eighth session). Only the first goes
 * early, so a read in which many streams top up their credit costs one send more, not one per
 * stream.
 *
 * <p>Outside a read (a drain of calls from other threads, a producer's turn) the peer is not
 * waiting on this side's reply to what it sent, so the count is not the measure: the writes are
 * flushed each {@link #FLUSH_EVERY_BYTES} handed to the transport, and at the task's end. Counting
 * writes there made a thread's small fire-and-forget calls cost a send per 256 frames (4 KB): 42 %
 * of the client loop's time went to those sends, and the core's rate rose from 16 to 24 M/s with
 * one send per batch (docs/benchmarks.md, twenty-sixth session).
 *
 * <p>Event loop only.
 */
final class Flusher {
  /** Writes after which a read batch's frames are flushed even before it ends. */
  static final int FLUSH_EVERY_WRITES = 256;

  /**
   * Bytes handed to the transport outside a read after which the next write's end flushes them,
   * before the task ends: half a {@link FrameWriter#BATCH_CAPACITY}, so each full batch is flushed
   * once the first frame of the next has been written (that frame stays in the open batch), and a
   * frame written on its own this long is flushed at once.
   */
  static final int FLUSH_EVERY_BYTES = FrameWriter.BATCH_CAPACITY / 2;

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
  private final Runnable flushTask = this::scheduledFlush;
  private boolean reading;
  private boolean creditSentInRead;
  private boolean dirty;
  private boolean flushScheduled;
  private int unflushedWrites;
  private long unflushedBytes;
  private boolean flushingInsideAWrite;
  private int writesThisTurn;

  Flusher(EventExecutor executor, FrameWriter writer, Transport transport) {
    this.executor = executor;
    this.writer = writer;
    this.transport = transport;
  }

  /**
   * The transport delivers a frame of a read batch (called for each; the first after {@link
   * #endRead} starts a batch): flushing waits for the batch's end.
   */
  void beginRead() {
    reading = true;
  }

  /** The read batch ended: flush what it produced. */
  void endRead() {
    reading = false;
    creditSentInRead = false;
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

  /**
   * Called after a REQUEST_N was written (and {@link #onWritten} counted it): the read batch's
   * first is flushed now, not at the batch's end.
   */
  void onCreditWritten() {
    if (reading && !creditSentInRead) {
      creditSentInRead = true;
      flushInsideAWrite(true);
    }
  }

  /** Called after every frame written. */
  void onWritten() {
    dirty = true;
    writesThisTurn++;
    if (reading) {
      if (++unflushedWrites >= FLUSH_EVERY_WRITES) {
        flushInsideAWrite(true);
      }
    } else {
      if (unflushedBytes >= FLUSH_EVERY_BYTES) {
        // What the transport holds goes out; the batch being filled stays open (flushed later).
        unflushedBytes = 0;
        flushInsideAWrite(false);
      }
      if (!flushScheduled) {
        flushScheduled = true;
        try {
          executor.execute(flushTask);
        } catch (RejectedExecutionException e) {
          flushScheduled = false; // the loop is shutting down: no task will come
          flushNow();
        }
      }
    }
  }

  /**
   * A flush made at the end of one frame's write, which may be one fragment of a message or a frame
   * whose stream is not yet marked done: the transport may tell of writability from inside it, and
   * the engine then tells producers and waiters from the next task ({@link #flushingInsideAWrite}),
   * so none of them writes in the middle of another's message.
   */
  private void flushInsideAWrite(boolean whole) {
    boolean was = flushingInsideAWrite;
    flushingInsideAWrite = true;
    try {
      if (whole) {
        flushNow();
      } else {
        transport.flush();
      }
    } finally {
      flushingInsideAWrite = was;
    }
  }

  /** Whether a flush made at the end of a frame's write is under way (see above). */
  boolean flushingInsideAWrite() {
    return flushingInsideAWrite;
  }

  /**
   * The writer gave the transport {@code bytes} (a batch of frames, or a frame on its own). Only
   * counted: the writer is in the middle of a write here, so the flush waits for {@link
   * #onWritten}.
   */
  void onHandedOver(int bytes) {
    unflushedBytes += bytes;
  }

  /** Whether the flush task {@link #onWritten} scheduled is still to run (a task on the loop). */
  boolean flushTaskPending() {
    return flushScheduled;
  }

  /** The task {@link #onWritten} scheduled (one at a time). */
  private void scheduledFlush() {
    flushScheduled = false;
    flushNow();
  }

  /** Flushes now if anything was written since the last flush. */
  void flushNow() {
    if (dirty) {
      dirty = false;
      unflushedWrites = 0;
      writer.handOver();
      unflushedBytes = 0;
      transport.flush();
    }
  }
}
