package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;

/**
 * One RSocket connection, from either side: both the client and the server may start requests.
 *
 * <p>Threading: the request methods, {@link #close()}, {@link #dispose()}, {@link #sendLease} and
 * the readiness methods may be called from any thread. Off the event loop, calls are handed over
 * through one bounded queue per connection that a single loop task drains, so a burst of calls
 * costs one wake-up and one flush. The queue holds at most {@link
 * ConnectionConfig#maxQueuedCallBytes()} bytes of payload: a call beyond it throws {@link
 * RejectedExecutionException} and releases its buffers. Producers on other threads avoid that by
 * waiting for {@link #isReadyForCalls()} with {@link #whenReadyForCalls} or {@link
 * #awaitReadyForCalls}. Everything the connection calls back (listeners, the responder) runs on
 * {@link #executor()}.
 *
 * <p>Ownership: the request methods take ownership of {@code metadata} and {@code data}: they are
 * released once encoded, or when the request fails. Null metadata sends no metadata.
 *
 * <p>Failures: a request that cannot be sent (the connection is closing or closed, no lease, an
 * unusable buffer) fails its listener with {@link StreamListener#onError} on the event loop; only
 * when the loop itself has shut down is the listener called on the calling thread, since there is
 * no loop left to call it on.
 *
 * <p>A stream returned for a request made off the loop is on the wire once the loop has sent it
 * (its {@link Stream#streamId()} is 0 until then, read on the loop): granting or sending on it
 * before then throws; cancelling it then means the request is never sent.
 */
public interface Connection {

  EventExecutor executor();

  ByteBufAllocator alloc();

  /** The metadata MIME type agreed in SETUP. */
  String metadataMimeType();

  /** The data MIME type agreed in SETUP. */
  String dataMimeType();

  /** The peer's address. */
  SocketAddress remoteAddress();

  /** This side's address. */
  SocketAddress localAddress();

  /**
   * The connection's TLS session (the peer's certificates, when it sent some: mutual TLS), or null
   * when the connection is not over TLS.
   */
  default javax.net.ssl.SSLSession tlsSession() {
    return null;
  }

  /**
   * Sends a request with no response. On the event loop, returns whether it was sent: false when
   * the connection is closing or closed, or no lease allows it (the buffers are released; nothing
   * is dropped without the caller knowing). From another thread it returns true once the call is
   * handed to the loop, which logs a failure there.
   */
  boolean fireAndForget(ByteBuf metadata, ByteBuf data);

  /**
   * {@link #fireAndForget(ByteBuf, ByteBuf)} whose data is {@code value}, which {@code encoder}
   * writes straight into the outbound frame (on the event loop, possibly later: see {@link
   * PayloadEncoder}) instead of into a buffer of its own that is then copied and released. On the
   * event loop a value that fails to encode throws, and nothing is sent. This default, for other
   * implementations, encodes into a buffer first.
   */
  default <T> boolean fireAndForget(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    return fireAndForget(metadata, Encoding.toBufferOrRelease(metadata, value, encoder, alloc()));
  }

  /** Sends connection-level metadata. */
  void metadataPush(ByteBuf metadata);

  /** Sends a request-response; the listener gets one {@code onNext} and {@code onComplete}. */
  Stream requestResponse(ByteBuf metadata, ByteBuf data, StreamListener listener);

  /**
   * {@link #requestResponse(ByteBuf, ByteBuf, StreamListener)} whose data is {@code value}, which
   * {@code encoder} writes straight into the request frame (see {@link #fireAndForget(ByteBuf,
   * Object, PayloadEncoder)}). A value that fails to encode on the event loop fails the stream with
   * INVALID, as an unusable buffer does; this default encodes into a buffer first and throws the
   * encoder's exception to the caller.
   */
  default <T> Stream requestResponse(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, StreamListener listener) {
    return requestResponse(
        metadata, Encoding.toBufferOrRelease(metadata, value, encoder, alloc()), listener);
  }

  /** Sends a request-stream granting {@code initialRequestN} (2^31-1 or more: unbounded). */
  Stream requestStream(
      ByteBuf metadata, ByteBuf data, long initialRequestN, StreamListener listener);

  /**
   * {@link #requestStream(ByteBuf, ByteBuf, long, StreamListener)} whose data is {@code value},
   * encoded into the request frame as {@link #requestResponse(ByteBuf, Object, PayloadEncoder,
   * StreamListener)} says.
   */
  default <T> Stream requestStream(
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder,
      long initialRequestN,
      StreamListener listener) {
    return requestStream(
        metadata,
        Encoding.toBufferOrRelease(metadata, value, encoder, alloc()),
        initialRequestN,
        listener);
  }

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

  /**
   * Whether a call from another thread would be taken now without piling up: the connection is
   * open, its hand-off queue is below half its bound and the transport is writable. Any thread.
   */
  boolean isReadyForCalls();

  /**
   * Runs {@code callback} once on the event loop as soon as {@link #isReadyForCalls()} holds (at
   * once if it holds now) or the connection has closed. No polling: the loop calls back when its
   * queue drains or the transport becomes writable.
   */
  void whenReadyForCalls(Runnable callback);

  /**
   * Blocks the calling thread until {@link #isReadyForCalls()} holds or the connection has closed,
   * at most {@code timeout}; returns whether it is ready. Parks without holding a monitor, so a
   * virtual thread unmounts while it waits. Must not be called on the event loop.
   */
  boolean awaitReadyForCalls(Duration timeout) throws InterruptedException;

  /**
   * A figure for load balancers, 0 to 1: 0 when the connection is draining or closed, or uses
   * leases and has none left (expired or spent); with leases, the fraction of the current lease's
   * requests left; otherwise 1. Any thread.
   */
  double availability();

  /** Open streams right now (requested by either side). Any thread; a recent value off-loop. */
  int activeStreams();

  /** Registers connection-level events; callbacks run on the event loop. Any thread. */
  void addListener(ConnectionListener listener);

  /**
   * Graceful close: sends ERROR[CONNECTION_CLOSE] and a KEEPALIVE, refuses new requests (the peer's
   * get ERROR[REJECTED]) and lets open streams finish. Once they are done and the peer has answered
   * that KEEPALIVE (so every request it sent before it learned of the close has been answered) or
   * closed its side, the transport closes after everything written has reached the socket. After
   * {@link ConnectionConfig#drainTimeout()} it is forced. A second call forces it at once, as
   * {@link #dispose()}.
   */
  void close();

  /** Closes at once: open streams fail with CANCELED and queued frames may be lost. */
  void dispose();

  /**
   * Completes with the reason once the transport has closed (always normally: the reason tells
   * how). Callbacks attached before completion run on the event loop.
   */
  CompletionStage<CloseReason> onClose();

  /** True until the connection has closed (also while draining). Any thread. */
  boolean isOpen();

  /** Whether the connection is draining: closing gracefully, no new requests. Any thread. */
  boolean isDraining();
}
