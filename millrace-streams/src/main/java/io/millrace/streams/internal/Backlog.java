package io.millrace.streams.internal;

import io.millrace.core.internal.UnreadBudget;
import io.millrace.streams.BacklogExceededException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

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
 * so that all the streams of a connection together are held to its limit too.
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

  // The queueing thread's.
  private long arrived; // how many came
  private long largest; // the largest size that came
  private long arrivedBytes; // of the messages queued, in total

  /** Bytes of the messages the reader took, in total: the reader's, an ordered store. */
  private long takenBytes;

  /** Whether the queue was dropped: nothing waits in it any more. Any thread sets it. */
  private volatile boolean dropped;

  /**
   * The queueing thread, before it queues a message of {@code size} bytes: null when it may wait
   * (it is counted, and charged to {@code budget}, the connection's, when not null), else the error
   * to tell the reader in its place (the stream is to be cancelled; the message is not counted).
   */
  public BacklogExceededException admit(long size, UnreadBudget budget) {
    long waiting = arrivedBytes - (long) TAKEN_BYTES.getOpaque(this);
    if (size > largest) {
      largest = size;
    }
    long limit = limit(largest);
    if (++arrived > ReadAhead.FIRST_REQUEST && waiting + size > limit) {
      return new BacklogExceededException(waiting, size, limit);
    }
    if (budget != null && !budget.admit(this, waiting, size)) {
      return BacklogExceededException.onConnection(budget.charged(), size, budget.limit());
    }
    arrivedBytes += size;
    return null;
  }

  /**
   * The queue was dropped (the reader closed it): what waited in it no longer counts against the
   * connection. Any thread; a message queued after it must not be admitted.
   */
  public void dropped() {
    dropped = true;
  }

  @Override
  protected long waitingNow() {
    return dropped ? 0 : arrivedBytes - (long) TAKEN_BYTES.getOpaque(this);
  }

  /** The reader's thread, for each message it takes: {@code size} bytes no longer wait. */
  public void taken(long size) {
    TAKEN_BYTES.setRelease(this, takenBytes + size); // (the reader's own field: a plain read)
  }

  /**
   * The most bytes that may wait once a message has come whose stream's largest message so far
   * (that one included) is {@code largest} bytes.
   */
  public static long limit(long largest) {
    return Math.max(BacklogExceededException.LIMIT, LARGEST_WAITING * largest);
  }
}
