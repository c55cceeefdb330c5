package io.millrace.reactor;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Answers a peer's requests with Reactor types; {@link ReactorResponder#of} serves it.
 *
 * <p>Ownership: a request payload belongs to the method (a heap copy by default: nothing to
 * release); the payloads the returned Mono or Flux emits belong to Millrace, which releases them
 * once written.
 *
 * <p>Backpressure: the returned Flux is requested from no faster than the peer's credit allows and
 * not while the transport is not writable, so a {@code Flux.generate} or a database cursor is read
 * at the peer's pace. A peer's CANCEL cancels it.
 *
 * <p>Errors: a Mono or Flux that fails with a {@link StreamErrorException} sends its code and
 * message; any other failure, or an exception thrown here, sends APPLICATION_ERROR with a fixed
 * text unless the connection's config sends handler messages.
 *
 * <p>Threading: methods run on the connection's event loop unless {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} is set; do not block here without one. The
 * returned Mono or Flux may emit on any thread.
 *
 * <p>The defaults reject the interaction with APPLICATION_ERROR (fire-and-forget and metadata push
 * are dropped).
 */
public interface ReactorHandler {

  /** Subscribed for its completion; a failure is only logged (there is no one to tell). */
  default Mono<Void> fireAndForget(Payload payload) {
    payload.release();
    return Mono.empty();
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default Mono<Void> metadataPush(Payload payload) {
    payload.release();
    return Mono.empty();
  }

  /**
   * The response; an empty Mono sends an empty completion. The answer is taken as soon as this
   * returns, on the same thread (the event loop, or the handler executor): a Mono known at once
   * ({@code Mono.just}, {@code fromCallable}) is called, unless an {@code onLastOperator} hook
   * would wrap it; any other is subscribed, and the caller's cancel cancels it.
   */
  default Mono<Payload> requestResponse(Payload payload) {
    payload.release();
    return Mono.error(StreamErrorException.application("request-response not supported"));
  }

  default Flux<Payload> requestStream(Payload payload) {
    payload.release();
    return Flux.error(StreamErrorException.application("request-stream not supported"));
  }

  /**
   * A channel opened with {@code first}; {@code inbound} carries the requester's later payloads
   * (subscribe to it at most once; its demand becomes credit; cancelling it stops only the inbound
   * half, while the returned Flux may go on).
   */
  default Flux<Payload> requestChannel(Payload first, Flux<Payload> inbound) {
    first.release();
    return Flux.error(StreamErrorException.application("request-channel not supported"));
  }
}
