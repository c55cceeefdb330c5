package io.millrace.streams.internal;

import io.millrace.streams.BacklogExceededException;

/**
 * How many bytes of received messages may wait on one queue of a stream's reader (the prefetch
 * queue, a blocking reader's): {@link BacklogExceededException#LIMIT}, or three of the stream's
 * largest message so far when that is more. A reader of large messages asks for two ahead of itself
 * ({@link ReadAhead#MIN_AHEAD}) and may have a third in hand, so a stream of them never comes near
 * it; one whose messages grow after credit was granted at a smaller size does, and is cancelled
 * there. Checked by the thread that queues, once per message.
 */
public final class Backlog {
  /** How many of the stream's largest messages may always wait. */
  static final int LARGEST_WAITING = ReadAhead.MIN_AHEAD + 1;

  private Backlog() {}

  /**
   * The most bytes that may wait once a message has come whose stream's largest message so far
   * (that one included) is {@code largest} bytes.
   */
  public static long limit(long largest) {
    return Math.max(BacklogExceededException.LIMIT, LARGEST_WAITING * largest);
  }
}
