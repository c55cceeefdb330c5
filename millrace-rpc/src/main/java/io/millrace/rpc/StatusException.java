package io.millrace.rpc;

/**
 * A call that ended with a status other than OK: thrown by handlers to fail a call with a chosen
 * status (and trailers), and given to callers whose call failed.
 */
public final class StatusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Status status;
  private final transient Headers trailers;

  StatusException(Status status, Headers trailers) {
    super(status.toString(), status.cause());
    this.status = status;
    this.trailers = trailers == null ? Headers.EMPTY : trailers;
  }

  public Status status() {
    return status;
  }

  /** The trailers the call ended with (empty when none). */
  public Headers trailers() {
    return trailers;
  }
}
