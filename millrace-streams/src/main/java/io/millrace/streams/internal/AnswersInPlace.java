package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import org.reactivestreams.Publisher;

/**
 * A {@link io.millrace.streams.ReactiveHandler} that can answer a request-response while it reads
 * the request, on the event loop: a handler whose answer is known at once is sent on the stream
 * there and then, with no Publisher, no payloads and no subscriber between the handler and the
 * frame. The RPC layer's unary calls are answered this way; each of them saves the four objects the
 * Reactive Streams path makes for one answer.
 *
 * <p>The responder calls {@link #requestResponse(Stream, ByteBuf, ByteBuf)} in place of {@code
 * requestResponse(Payload)} when it lends requests ({@link ReadsInPlace}: no handler executor).
 */
public interface AnswersInPlace extends ReadsInPlace {

  /**
   * Handles a request-response whose request is lent ({@code metadata}, null for none, and {@code
   * data} are the engine's, valid until this returns). Returns null when the call was answered on
   * {@code stream} here (its one payload sent, or the stream completed or failed); otherwise the
   * Publisher of the answer, which the responder subscribes and sends as it does {@code
   * requestResponse(Payload)}'s.
   */
  Publisher<Payload> requestResponse(Stream stream, ByteBuf metadata, ByteBuf data);
}
