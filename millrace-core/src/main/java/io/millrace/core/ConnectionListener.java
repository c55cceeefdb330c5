package io.millrace.core;

/**
 * Connection-level events, for API flavours and load balancers. Register with {@link
 * Connection#addListener}; every method runs on the connection's event loop and has an empty
 * default.
 */
public interface ConnectionListener {

  /** The transport drained below its low-water mark after being full. */
  default void onWritable(Connection connection) {}

  /**
   * The peer granted a lease: this side may start {@code requests} requests within {@code
   * ttlMillis}.
   */
  default void onLeaseGranted(Connection connection, int ttlMillis, int requests) {}

  /** The lease from the peer ran out of time or of requests; new requests fail until the next. */
  default void onLeaseExpired(Connection connection) {}

  /**
   * The connection stopped taking new requests and lets open streams finish: this side called
   * {@link Connection#close()} or the peer sent CONNECTION_CLOSE.
   */
  default void onDraining(Connection connection, CloseReason reason) {}

  /** The connection closed; nothing follows. */
  default void onClosed(Connection connection, CloseReason reason) {}

  /**
   * The connection lost its transport. With resumption its streams wait: a client reconnects next
   * ({@link #onReconnecting}); a server waits for the client, up to the session timeout. With
   * {@link Reconnect} alone, its streams have failed and the client reconnects next.
   */
  default void onDisconnected(Connection connection, String reason) {}

  /**
   * A client will try to reconnect in {@code delayMillis} (attempt 1, 2, ...): to resume the
   * session, or with {@link Reconnect}, to make a new connection.
   */
  default void onReconnecting(Connection connection, int attempt, long delayMillis) {}

  /**
   * A client with {@link Reconnect} made a new connection (a new SETUP, not a resumption): requests
   * that waited for it are being sent. What was in flight on the lost one failed with it.
   */
  default void onReconnected(Connection connection) {}

  /** The session is carried on a new connection; what the peer had not received was resent. */
  default void onResumed(Connection connection) {}

  /**
   * The server rejected the resumption (ERROR[REJECTED_RESUME]); {@link #onClosed} follows and open
   * streams fail.
   */
  default void onResumeRejected(Connection connection, String message) {}
}
