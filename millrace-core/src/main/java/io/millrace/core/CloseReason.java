package io.millrace.core;

import io.millrace.frame.ErrorCode;
import java.util.Objects;

/**
 * Why a connection closed (or is draining): who ended it, with which RSocket error code and
 * message, and the exception behind it when there was one.
 *
 * <pre>{@code
 * connection.onClose().thenAccept(reason -> {
 *   if (reason.kind() == CloseReason.Kind.KEEPALIVE_TIMEOUT) { ... }
 * });
 * }</pre>
 */
public final class CloseReason {

  /** What ended the connection. */
  public enum Kind {
    /** This side closed it gracefully ({@link Connection#close()}): CONNECTION_CLOSE was sent. */
    CLOSED_BY_THIS_SIDE,
    /** The peer closed it gracefully: it sent ERROR[CONNECTION_CLOSE]. */
    CLOSED_BY_PEER,
    /** The peer sent an ERROR on stream 0 (CONNECTION_ERROR, a setup error, ...). */
    ERROR_FROM_PEER,
    /** This side sent an ERROR on stream 0: the peer broke the protocol or a limit. */
    ERROR_SENT,
    /** Nothing arrived from the peer within the max lifetime. */
    KEEPALIVE_TIMEOUT,
    /** The transport ended without an RSocket goodbye (the peer closed or reset the socket). */
    TRANSPORT_CLOSED,
    /** The transport failed with an I/O error. */
    IO_ERROR,
    /** A graceful close did not finish within its drain timeout and was forced. */
    DRAIN_TIMEOUT,
    /** This side closed it at once ({@link Connection#dispose()}, a shutdown without draining). */
    DISPOSED,
    /**
     * A resumable session found no connection in time (see {@link Resumption#sessionTimeout()}).
     */
    SESSION_EXPIRED,
    /**
     * The server answered RESUME with ERROR[REJECTED_RESUME]; a rejected session is not retried.
     */
    RESUME_REJECTED,
    /** A resumption could not go on: the two sides' positions do not meet, or the answer broke. */
    RESUME_FAILED,
    /** A reconnecting client ({@link Reconnect}) gave up: its attempts ran out. */
    RECONNECT_FAILED
  }

  private final Kind kind;
  private final int errorCode;
  private final String message;
  private final Throwable cause;

  public CloseReason(Kind kind, int errorCode, String message, Throwable cause) {
    this.kind = Objects.requireNonNull(kind);
    this.errorCode = errorCode;
    this.message = message == null ? "" : message;
    this.cause = cause;
  }

  public Kind kind() {
    return kind;
  }

  /**
   * The RSocket error code sent or received on stream 0 ({@link ErrorCode}), or the code this side
   * fails open streams with: CONNECTION_CLOSE for graceful closes, CONNECTION_ERROR for timeouts
   * and transport failures, CANCELED for {@link Kind#DISPOSED}.
   */
  public int errorCode() {
    return errorCode;
  }

  public String message() {
    return message;
  }

  /** The exception behind an {@link Kind#IO_ERROR}, or null. */
  public Throwable cause() {
    return cause;
  }

  /** Whether the connection ended as both sides intended: a graceful close by either. */
  public boolean isGraceful() {
    return kind == Kind.CLOSED_BY_THIS_SIDE || kind == Kind.CLOSED_BY_PEER;
  }

  @Override
  public String toString() {
    return kind
        + " ("
        + ErrorCode.name(errorCode)
        + (message.isEmpty() ? "" : ": " + message)
        + ")";
  }
}
