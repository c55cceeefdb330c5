package io.millrace.streams;

/**
 * A stream was cancelled because the messages waiting for its reader passed the limit on their
 * bytes. Credit (RSocket's REQUEST_N) counts messages, and a reader asks ahead by the size of what
 * it has read so far, so a peer whose messages grow after credit was granted at a smaller size may
 * send far more bytes than the reader meant to hold (up to the credit times the largest message the
 * connection accepts). Once a message would take what waits on one queue of the stream's reader
 * (the prefetch queue, a blocking reader's) past {@link #LIMIT} bytes, or past three of the
 * stream's largest message so far when that is more (a reader of large messages has two asked for
 * ahead and may hold a third), the message is dropped, the stream is cancelled toward the peer, and
 * its reader gets this error in place of what did not fit (a blocking reader after what waited).
 * The messages of the stream's first request, made before any size was known, may wait whatever
 * their size.
 *
 * <p>What waits on all the streams of one connection is bounded too, by {@link
 * io.millrace.core.ConnectionConfig#maxUnreadBytes()} (64 MiB by default), the messages of first
 * requests included: a message that would pass that limit cancels its stream in the same way, even
 * when its own reader keeps up (what fills the connection may be another stream's). The next
 * paragraph is about the limit of one queue.
 *
 * <p>The limit is a guard, not flow control: a reader that keeps up, or whose peer's messages keep
 * their size, never meets it. A legitimate stream meets it only when its messages grow many times
 * over after enough small ones to open the reader's window to them (read-ahead windows double once
 * per half window: about 2,000 messages to a blocking reader, 110 to a subscriber's prefetch) while
 * its reader falls that far behind.
 */
public final class BacklogExceededException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * The most bytes of messages (metadata and data, and 64 more for each message) that may wait on
   * one queue of a stream's reader however small its messages: 64 MiB, sixty-four times what a
   * reader of small messages asks for ahead of itself.
   */
  public static final long LIMIT = 64L << 20;

  /** {@code waiting} bytes waited when a message of {@code size} bytes came, past {@code limit}. */
  public BacklogExceededException(long waiting, long size, long limit) {
    this(
        "stream cancelled: a message of "
            + size
            + " bytes came while "
            + waiting
            + " bytes waited for a slow reader, past the limit of "
            + limit
            + " (the peer's messages outgrew the credit granted at a smaller size)");
  }

  private BacklogExceededException(String message) {
    super(message, null, false, false);
  }

  /**
   * A message of {@code size} bytes came while {@code unread} bytes waited for readers on all the
   * streams of its connection, past the connection's {@code limit} ({@link
   * io.millrace.core.ConnectionConfig#maxUnreadBytes()}).
   */
  public static BacklogExceededException onConnection(long unread, long size, long limit) {
    return new BacklogExceededException(
        "stream cancelled: a message of "
            + size
            + " bytes came while "
            + unread
            + " bytes waited for readers on its connection, past the connection's limit of "
            + limit
            + " (ConnectionConfig.maxUnreadBytes)");
  }
}
