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
}
