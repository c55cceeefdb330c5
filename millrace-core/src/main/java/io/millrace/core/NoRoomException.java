package io.millrace.core;

import java.util.concurrent.RejectedExecutionException;

/**
 * A call from another thread was refused because the connection's hand-off to its event loop has no
 * room now: the calls waiting for the loop exceed {@link ConnectionConfig#maxQueuedCallBytes()}, or
 * the peer is not reading. Nothing was sent and the call's buffers were released. Room comes back:
 * wait for {@link Connection#isReadyForCalls()} ({@link Connection#awaitReadyForCalls} or {@link
 * Connection#whenReadyForCalls}) and call again. Other refusals (a connection closed, or a
 * reconnecting connection's own limit while it has none) are plain {@link
 * RejectedExecutionException}s or fail the call itself.
 */
public final class NoRoomException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  public NoRoomException(String message) {
    super(message);
  }
}
