package io.millrace.core;

import io.millrace.frame.ErrorCode;
import io.netty.buffer.ByteBuf;

/**
 * Handles the requests a peer sends on one connection. Called on the connection's event loop; a
 * handler that blocks stalls the whole connection, so hand slow work to another executor and come
 * back with {@code stream.connection().executor().execute(...)}.
 *
 * <p>Ownership: {@code metadata} and {@code data} are borrowed (valid until the method returns);
 * keep one with {@code retainedSlice()} or a copy, never {@code retain()} (see {@link
 * StreamListener}). Null metadata means none was sent.
 *
 * <p>Each request method returns the listener for later events of that stream (cancel, credit,
 * inbound channel payloads), or null when the handler needs none. If the stream can still send when
 * the method returns, the listener's {@link StreamListener#onReady} is called at once, so a handler
 * may simply return a producer that sends from {@code onReady}. The default implementations reject
 * the interaction with APPLICATION_ERROR, so a responder overrides what it supports.
 */
public interface Responder {

  /** A responder that rejects every request and ignores fire-and-forget and metadata push. */
  Responder REJECT_ALL = new Responder() {};

  default void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {}

  default void metadataPush(Connection connection, ByteBuf metadata) {}

  /** Answer with {@link Stream#next} (which completes it) or {@link Stream#error}. */
  default StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    stream.error(ErrorCode.APPLICATION_ERROR, "request-response not supported");
    return null;
  }

  /** The peer's initial credit is in {@link Stream#credit()}; send while it lasts. */
  default StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    stream.error(ErrorCode.APPLICATION_ERROR, "request-stream not supported");
    return null;
  }

  /**
   * A channel opens with the requester's first payload ({@code metadata}, {@code data}); {@code
   * inboundComplete} is true when that was also its last. Ask for more with {@link Stream#request}.
   */
  default StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    stream.error(ErrorCode.APPLICATION_ERROR, "request-channel not supported");
    return null;
  }
}
