package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;

/**
 * One RSocket connection, from either side: both the client and the server may start requests.
 *
 * <p>Threading: the request methods may be called from any thread; off the event loop they are
 * queued to it as one task each. Everything the connection calls back (listeners, the responder)
 * runs on {@link #executor()}.
 *
 * <p>Ownership: the request methods take ownership of {@code metadata} and {@code data}: they are
 * released once encoded, or when the request fails. Null metadata sends no metadata.
 */
public interface Connection {

  EventExecutor executor();

  ByteBufAllocator alloc();

  /** The metadata MIME type agreed in SETUP. */
  String metadataMimeType();

  /** The data MIME type agreed in SETUP. */
  String dataMimeType();

  /** Sends a request with no response. */
  void fireAndForget(ByteBuf metadata, ByteBuf data);

  /** Sends connection-level metadata. */
  void metadataPush(ByteBuf metadata);

  /** Sends a request-response; the listener gets one {@code onNext} and {@code onComplete}. */
  Stream requestResponse(ByteBuf metadata, ByteBuf data, StreamListener listener);

  /** Sends a request-stream granting {@code initialRequestN} (2^31-1 or more: unbounded). */
  Stream requestStream(
      ByteBuf metadata, ByteBuf data, long initialRequestN, StreamListener listener);

  /**
   * Opens a request-channel with a first payload; further outbound payloads wait for the
   * responder's credit ({@link StreamListener#onReady}). {@code complete} completes this side at
   * once.
   */
  Stream requestChannel(
      ByteBuf metadata,
      ByteBuf data,
      long initialRequestN,
      boolean complete,
      StreamListener listener);

  /**
   * Sends a LEASE to the peer: it may start at most {@code numberOfRequests} requests within {@code
   * ttlMillis}. Only on connections set up with leases.
   */
  void sendLease(int ttlMillis, int numberOfRequests, ByteBuf metadata);

  /** Whether the transport is writable now (a hint for producers off the event loop). */
  boolean isWritable();

  /** Open streams right now (requested by either side). */
  int activeStreams();

  /**
   * Graceful close: sends ERROR[CONNECTION_CLOSE], refuses new requests, lets open streams finish,
   * then closes the transport.
   */
  void close();

  /** Closes the transport at once, failing open streams. */
  void dispose();

  /** Completes when the transport has closed; fails with the reason for an abnormal close. */
  Future<Void> onClose();

  boolean isOpen();
}
