package io.millrace.core;

import io.millrace.frame.ErrorCode;

/**
 * A stream ended with an RSocket error: the peer's ERROR frame, or a local failure (the connection
 * closed, no lease, REJECTED by a draining peer). The API flavours fail their calls with it, and an
 * application throws it from a handler to choose the code the peer sees (APPLICATION_ERROR or one
 * of the user codes {@link ErrorCode#MIN_USER_ALLOWED} to {@link ErrorCode#MAX_USER_ALLOWED}; any
 * other exception a handler throws reaches the peer as APPLICATION_ERROR with its message).
 */
public class StreamErrorException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int errorCode;

  public StreamErrorException(int errorCode, String message) {
    super(message, null, false, false);
    this.errorCode = errorCode;
  }

  /** An APPLICATION_ERROR with {@code message}. */
  public static StreamErrorException application(String message) {
    return new StreamErrorException(ErrorCode.APPLICATION_ERROR, message);
  }

  /** The RSocket error code; see {@link ErrorCode}. */
  public int errorCode() {
    return errorCode;
  }

  @Override
  public String toString() {
    return "StreamErrorException[" + ErrorCode.name(errorCode) + "]: " + getMessage();
  }
}
