package io.millrace.mutiny;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/**
 * Answers a peer's requests with Mutiny types; {@link MutinyResponder#of} serves it.
 *
 * <p>Ownership: a request payload belongs to the method (a heap copy by default: nothing to
 * release); the payloads the returned Uni or Multi emits belong to Millrace, which releases them
 * once written.
 *
 * <p>Backpressure: the returned Multi is requested from no faster than the peer's credit allows and
 * not while the transport is not writable. A peer's CANCEL cancels it.
 *
 * <p>Errors: failing with a {@link StreamErrorException} sends its code and message; any other
 * failure, or an exception thrown here, sends APPLICATION_ERROR with a fixed text unless the
 * connection's config sends handler messages.
 *
 * <p>Threading: methods run on the connection's event loop unless {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} is set; do not block here without one.
 *
 * <p>The defaults reject the interaction with APPLICATION_ERROR (fire-and-forget and metadata push
 * are dropped).
 */
public interface MutinyHandler {

  /** Subscribed for its completion; a failure is only logged. */
  default Uni<Void> fireAndForget(Payload payload) {
    payload.release();
    return Uni.createFrom().voidItem();
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default Uni<Void> metadataPush(Payload payload) {
    payload.release();
    return Uni.createFrom().voidItem();
  }

  /**
   * The response; a null item sends an empty completion. The Uni is subscribed as soon as this
   * returns, on the same thread (the event loop, or the handler executor), so its work starts at
   * once; the caller's cancel reaches it through its {@code onCancellation}.
   */
  default Uni<Payload> requestResponse(Payload payload) {
    payload.release();
    return Uni.createFrom()
        .failure(StreamErrorException.application("request-response not supported"));
  }

  default Multi<Payload> requestStream(Payload payload) {
    payload.release();
    return Multi.createFrom()
        .failure(StreamErrorException.application("request-stream not supported"));
  }

  /**
   * A channel opened with {@code first}; {@code inbound} carries the requester's later payloads
   * (subscribe to it at most once; cancelling it stops only the inbound half).
   */
  default Multi<Payload> requestChannel(Payload first, Multi<Payload> inbound) {
    first.release();
    return Multi.createFrom()
        .failure(StreamErrorException.application("request-channel not supported"));
  }
}
