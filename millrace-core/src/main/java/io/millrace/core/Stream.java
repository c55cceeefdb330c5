package io.millrace.core;

import io.netty.buffer.ByteBuf;

/**
 * One RSocket stream as seen from this side: an outbound half (payloads this side sends, limited by
 * the credit the peer grants) and an inbound half (payloads the peer sends, limited by the credit
 * this side grants with {@link #request}).
 *
 * <p>Which halves exist depends on the interaction and the side: a request-stream requester only
 * receives, its responder only sends, and both sides of a channel do both. A request-response
 * responder sends exactly one payload: {@link #next} completes it.
 *
 * <p>Threading: the methods that send or grant ({@link #next}, {@link #complete}, {@link #error},
 * {@link #request}, {@link #cancel}) and {@link #isReady()} must be called on the connection's
 * event loop ({@link Connection#executor()}) and throw {@link IllegalStateException} elsewhere,
 * which keeps the per-message path free of locks and atomics; the state queries ({@link
 * #isCancelled()}, {@link #isInboundDone()}, {@link #isOutboundDone()}) may be called from any
 * thread.
 *
 * <p>Ownership: {@link #next} takes ownership of the buffers passed in, whatever happens (they are
 * released even when the stream has already ended).
 */
public interface Stream {

  /** The stream id; 0 until a request issued off the event loop has been sent. */
  int streamId();

  /** Credit the peer has granted for outbound payloads; {@link Long#MAX_VALUE} is unbounded. */
  long credit();

  /**
   * Whether {@link #next} may be called now: the outbound half is open, the peer granted credit and
   * the transport is writable. When false, wait for {@link StreamListener#onReady}.
   */
  boolean isReady();

  /**
   * Sends one payload. {@code metadata} may be null (no metadata). Throws {@link
   * IllegalStateException} without credit; check {@link #credit()} or {@link #isReady()}. Sending
   * while the transport is not writable is allowed (it queues) but a producer should pause.
   */
  void next(ByteBuf metadata, ByteBuf data);

  /** Sends a final payload and completes the outbound half, in one frame. */
  void nextAndComplete(ByteBuf metadata, ByteBuf data);

  /**
   * Sends one payload whose data is {@code value}, which {@code encoder} writes straight into the
   * outbound frame; otherwise as {@link #next(ByteBuf, ByteBuf)} ({@code metadata} is taken over).
   * Millrace's streams fail with APPLICATION_ERROR when the value fails to encode, as for an
   * unusable buffer; this default, for other implementations, encodes into a buffer first and
   * throws the encoder's exception to the caller.
   */
  default <T> void next(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    next(metadata, Encoding.toBufferOrRelease(metadata, value, encoder, connection().alloc()));
  }

  /**
   * {@link #next(ByteBuf, Object, PayloadEncoder)} that also completes the outbound half, in one
   * frame.
   */
  default <T> void nextAndComplete(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    nextAndComplete(
        metadata, Encoding.toBufferOrRelease(metadata, value, encoder, connection().alloc()));
  }

  /** Completes the outbound half. */
  void complete();

  /** Ends the stream with an ERROR frame; {@code errorCode} is APPLICATION_ERROR or a user code. */
  void error(int errorCode, String message);

  /**
   * Ends the stream with an ERROR frame for a failure of application code: a {@link
   * StreamErrorException} sends its code (when a stream may carry it, APPLICATION_ERROR otherwise)
   * and its message; any other exception sends APPLICATION_ERROR with a fixed text, or with its
   * message when {@link ConnectionConfig#errorMessagesFromHandlers()} is on. The API flavours end a
   * stream this way when a handler or a Publisher fails.
   */
  void fail(Throwable cause);

  /** Grants the peer {@code n} more inbound payloads; n at or above 2^31-1 means unbounded. */
  void request(long n);

  /**
   * Sends CANCEL. A requester ends the whole stream (a channel's outbound half too): nothing more
   * is sent or delivered. A channel responder stops only its inbound half: the requester stops
   * sending while this side may go on sending until it completes.
   */
  void cancel();

  /** The connection this stream belongs to. */
  Connection connection();

  /**
   * Whether the stream was cancelled: the peer sent CANCEL, or this side called {@link #cancel()}.
   * A responder that sees it should stop its work. Any thread.
   */
  boolean isCancelled();

  /**
   * Whether nothing more will arrive from the peer (completed, failed or cancelled). Any thread.
   */
  boolean isInboundDone();

  /** Whether this side will send nothing more on the stream. Any thread. */
  boolean isOutboundDone();
}
