package io.millrace.streams;

/**
 * A stream was cancelled because the messages waiting for its reader passed the limit on their
 * bytes. Credit (RSocket's REQUEST_N) counts messages, and a reader asks ahead by the size of what
 * it has read so far, so a peer whose messages grow after credit was granted at a smaller size may
 * send far more bytes than the reader meant to hold: once more than {@link #LIMIT} bytes would wait
 * on one stream's queue (a queue that holds nothing takes any one message), the message that passes
 * it is dropped, the stream is cancelled toward the peer, and its reader gets this error in place
 * of what did not fit. A peer that sends its largest messages where it was asked for small ones so
 * costs a reader at most about {@code LIMIT} plus one message per queue, not the credit times the
 * largest message.
 */
public final class BacklogExceededException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * The most bytes of messages (metadata and data) that may wait on one queue of a stream's reader
   * however small its messages: 16 MiB, sixteen times what a reader of small messages asks for
   * ahead of itself.
   */
  public static final long LIMIT = 16L << 20;

  /** {@code waiting} bytes waited when a message of {@code size} bytes came, past {@code limit}. */
  public BacklogExceededException(long waiting, long size, long limit) {
    super(
        "stream cancelled: a message of "
            + size
            + " bytes came while "
            + waiting
            + " bytes waited for a slow reader, past the limit of "
            + limit
            + " (the peer's messages outgrew the credit granted at a smaller size)",
        null,
        false,
        false);
  }
}
