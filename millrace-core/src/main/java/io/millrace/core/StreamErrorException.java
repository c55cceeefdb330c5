package io.millrace.core;

import io.millrace.frame.ErrorCode;

/**
 * A stream ended with an RSocket error: the peer's ERROR frame, or a local failure (the connection
 * closed, no lease, REJECTED by a draining peer). The API flavours fail their calls with it.
 *
 * <p>An application throws it from a {@link Responder} or {@link StreamListener} method, or fails a
 * flavour's answer with it, to choose what the peer sees: its code (APPLICATION_ERROR, REJECTED,
 * CANCELED, INVALID or a user code from {@link ErrorCode#MIN_USER_ALLOWED} to {@link
 * ErrorCode#MAX_USER_ALLOWED}; any other code is sent as APPLICATION_ERROR) and its message, which
 * is always sent, unless the exception is one this side {@link #received}. Any other exception
 * reaches the peer as APPLICATION_ERROR with a fixed text (see {@link
 * ConnectionConfig#errorMessagesFromHandlers()}); see {@link Stream#fail}.
 */
public class StreamErrorException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int errorCode;
  private final boolean received;

  /** An error to send: thrown or failed with by application code, its code and message go out. */
  public StreamErrorException(int errorCode, String message) {
    this(errorCode, message, false);
  }

  private StreamErrorException(int errorCode, String message, boolean received) {
    super(message, null, false, false);
    this.errorCode = errorCode;
    this.received = received;
  }

  /**
   * An error this side was told of or met: the peer's ERROR, or a local failure (the connection
   * lost, a call refused). A handler that passes one on (a gateway failing with its backend's
   * error) does not forward its code and message: the peer gets APPLICATION_ERROR with the fixed
   * text, as for any other exception, so a backend's internals and retry codes stay inside.
   */
  public static StreamErrorException received(int errorCode, String message) {
    return new StreamErrorException(errorCode, message, true);
  }

  /** Whether this error was received or met here rather than raised to be sent. */
  public boolean isReceived() {
    return received;
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
