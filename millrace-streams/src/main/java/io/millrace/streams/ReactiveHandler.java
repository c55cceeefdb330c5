package io.millrace.streams;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.internal.NoopSubscription;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * Answers a peer's requests with Reactive Streams Publishers; {@link ReactiveResponder#of} turns it
 * into the engine's responder.
 *
 * <p>Ownership: the payloads given belong to the handler. By default they are heap copies that need
 * no release (see {@link Payload}); the payloads a returned Publisher emits belong to Millrace.
 *
 * <p>Errors: a Publisher that fails with a {@link StreamErrorException} sends its code; any other
 * failure, an exception thrown by a method, or a null Publisher sends APPLICATION_ERROR with the
 * message. Cancellation by the peer cancels the returned Publisher's subscription.
 *
 * <p>A request-response's Publisher that is also a {@link java.util.concurrent.Callable} follows
 * Reactor's convention for such sources: {@code call()} gives its one item, null for none, or
 * throws its error, doing what a subscription would. On the event loop such an answer may be taken
 * by that call instead of a subscription (when the stream can take it at once).
 *
 * <p>Threading: the methods run on the connection's event loop unless {@link
 * StreamsOptions#handlerExecutor()} is set; the returned Publishers may emit on any thread, and are
 * asked for no more than the peer's credit allows.
 *
 * <p>The defaults reject the interaction with APPLICATION_ERROR; fire-and-forget and metadata push
 * are ignored.
 */
public interface ReactiveHandler {

  /** The Publisher is subscribed for its completion; its failure is only logged. */
  default Publisher<Void> fireAndForget(Payload payload) {
    payload.release();
    return null;
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default Publisher<Void> metadataPush(Payload payload) {
    payload.release();
    return null;
  }

  /** Emits at most one payload: the response (none: an empty response). */
  default Publisher<Payload> requestResponse(Payload payload) {
    payload.release();
    return failed("request-response not supported");
  }

  default Publisher<Payload> requestStream(Payload payload) {
    payload.release();
    return failed("request-stream not supported");
  }

  /**
   * A channel opened with {@code first}; {@code inbound} carries the requester's later payloads
   * (its demand becomes credit; cancelling it stops only the inbound half).
   */
  default Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
    first.release();
    return failed("request-channel not supported");
  }

  private static Publisher<Payload> failed(String message) {
    return (Subscriber<? super Payload> s) -> {
      s.onSubscribe(NoopSubscription.INSTANCE);
      s.onError(StreamErrorException.application(message));
    };
  }
}
