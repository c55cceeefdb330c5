package io.millrace.core;

import io.netty.buffer.ByteBuf;

/**
 * Receives the events of one stream, on the connection's event loop.
 *
 * <p>Ownership: {@code metadata} and {@code data} in {@link #onNext} are borrowed: they are valid
 * until the method returns and the engine releases them afterwards. Keep one with {@code
 * retainedSlice()} (a view of your own, released later) or a copy; echo one with {@code
 * stream.next(null, data.retainedSlice())}. Not {@code retain()}: over TCP, TLS, Unix sockets and
 * WebSocket the buffers are the connection's receive buffer positioned at this payload for the
 * call, lent without an object per frame; on every transport their {@code retain()}, {@code
 * release()} and resizing methods throw IllegalStateException. A null {@code metadata} means the
 * payload has no metadata (M flag clear).
 *
 * <p>Every method has an empty default, so a listener overrides only what its interaction needs.
 */
public interface StreamListener {

  /** A listener that ignores every event. */
  StreamListener NOOP = new StreamListener() {};

  /** A payload arrived from the peer (it counted against the credit this side granted). */
  default void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {}

  /** The peer completed its side of the stream; no more {@link #onNext} follows. */
  default void onComplete(Stream stream) {}

  /**
   * The stream ended with an error: an ERROR frame from the peer, a local failure (the connection
   * closed, a lease missing) or a protocol violation. {@code errorCode} is one of {@link
   * io.millrace.frame.ErrorCode}'s or an application code. Nothing else follows.
   */
  default void onError(Stream stream, int errorCode, String message) {}

  /**
   * Outbound payloads may be sent: the peer granted credit or the transport drained. Send while
   * {@link Stream#isReady()} holds.
   */
  default void onReady(Stream stream) {}

  /**
   * The peer sent CANCEL: stop sending. On a responder (every interaction) the requester has ended
   * the whole stream: nothing more arrives either, and the stream is gone. On a request-channel
   * requester the responder has only stopped reading: its payloads may still arrive until it
   * completes or fails its side.
   */
  default void onCancel(Stream stream) {}
}
