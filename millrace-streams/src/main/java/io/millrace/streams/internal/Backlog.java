package io.millrace.streams.internal;

import io.millrace.core.internal.UnreadBudget;
import io.millrace.streams.BacklogExceededException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;

/**
 * How many bytes of received messages may wait on one queue of a stream's reader (the prefetch
 * queue, a blocking reader's): {@link BacklogExceededException#LIMIT}, or three of the stream's
 * largest message so far when that is more. A reader of large messages asks for two ahead of itself
 * ({@link ReadAhead#MIN_AHEAD}) and may have a third in hand, so a stream of them never comes near
 * it; one whose messages grow after credit was granted at a smaller size does, and is cancelled
 * there. Checked by the thread that queues, once per message.
 *
 * <p>An instance counts one blocking reader's queue, which the thread that queues fills ({@link
 * #admit}) and the reader's thread empties ({@link #taken}): each writes only its own total (no
 * atomic operation), and the queueing thread reads the reader's to learn how many bytes wait. The
 * messages of the reader's first request ({@link ReadAhead#FIRST_REQUEST}), asked for before any
 * size was known, may wait whatever their size.
 *
 * <p>What waits is also charged to the connection's {@link UnreadBudget}, as one of its accounts,
 * so that all the streams of a connection together are held to its limit too. Each message counts
 * {@link UnreadBudget#MESSAGE_OVERHEAD} bytes more than its size, there and here. A queue whose
 * reader has gone without closing it (an iterator dropped unread, once the collector has cleared
 * it) counts nothing.
 */
public final class Backlog extends UnreadBudget.Account {
  /** How many of the stream's largest messages may always wait. */
  static final int LARGEST_WAITING = ReadAhead.MIN_AHEAD + 1;

  private static final VarHandle TAKEN_BYTES;

  static {
    try {
      TAKEN_BYTES = MethodHandles.lookup().findVarHandle(Backlog.class, "takenBytes", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The reader, weakly: once it has gone (dropped without a close), nothing waits for it. */
  private final WeakReference<Object> reader;

  // The queueing thread's.
  private long arrived; // how many came
  private long largest; // the largest size that came
  private long arrivedBytes; // of the messages queued, in total, each with its overhead

  /** Bytes of the messages the reader took, as counted: the reader's, an ordered store. */
  private long takenBytes;

  /** Whether the queue was dropped: nothing waits in it any more. Any thread sets it. */
  private volatile boolean dropped;

  /** The queue of {@code reader}, which holds it. */
  public Backlog(Object reader) {
    this.reader = new WeakReference<>(reader);
  }

  /**
   * The queueing thread, before it queues a message of {@code size} bytes: null when it may wait
   * (it is counted, and charged to {@code budget}, the connection's, when not null), else the error
   * to tell the reader in its place (the stream is to be cancelled; the message is not counted).
   * Each message counts {@link UnreadBudget#MESSAGE_OVERHEAD} bytes more than its size.
   */
  public BacklogExceededException admit(long size, UnreadBudget budget) {
    long waiting = dropped ? 0 : arrivedBytes - (long) TAKEN_BYTES.getOpaque(this);
    if (size > largest) {
      largest = size;
    }
    long limit = limit(largest);
    long counted = size + UnreadBudget.MESSAGE_OVERHEAD;
    if (++arrived > ReadAhead.FIRST_REQUEST && waiting + counted > limit) {
      return new BacklogExceededException(waiting, size, limit);
    }
    if (budget == null) {
      arrivedBytes += counted;
    } else if (budget.onLoop()) {
      if (!budget.admitOnLoop(this, waiting, size)) {
        return BacklogExceededException.onConnection(budget.charged(), size, budget.limit());
      }
      arrivedBytes += counted;
    } else {
      arrivedBytes += counted;
      budget.recountLater(this); // queued on another thread: counted by the loop from now
    }
    return null;
  }

  /** The reader's thread, for each message it takes: {@code size} bytes no longer wait. */
  public void taken(long size) {
    // (the reader's own field: a plain read)
    TAKEN_BYTES.setRelease(this, takenBytes + size + UnreadBudget.MESSAGE_OVERHEAD);
  }

  /**
   * The queue was dropped (the reader closed it): what waited in it no longer counts against the
   * connection. Any thread. (A message the queueing thread admits meanwhile is dropped by the
   * closing reader, and counted until the budget next reads this account.)
   */
  public void dropped() {
    dropped = true;
  }

  @Override
  protected long waitingNow() {
    return dropped || reader.refersTo(null) ? 0 : arrivedBytes - (long) TAKEN_BYTES.getOpaque(this);
  }

  /**
   * The most bytes that may wait once a message has come whose stream's largest message so far
   * (that one included) is {@code largest} bytes.
   */
  public static long limit(long largest) {
    return Math.max(
        BacklogExceededException.LIMIT,
        LARGEST_WAITING * (largest + UnreadBudget.MESSAGE_OVERHEAD));
  }
}
