package io.millrace.rxjava;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;

/**
 * Answers a peer's requests with RxJava 3 types; {@link RxJavaResponder#of} serves it.
 *
 * <p>Ownership: a request payload belongs to the method (a heap copy by default: nothing to
 * release); the payloads the returned Single or Flowable emits belong to Millrace, which releases
 * them once written.
 *
 * <p>Backpressure: the returned Flowable is requested from no faster than the peer's credit allows
 * and not while the transport is not writable. A peer's CANCEL disposes it.
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
public interface RxJavaHandler {

  /** Subscribed for its completion; a failure is only logged. */
  default Completable fireAndForget(Payload payload) {
    payload.release();
    return Completable.complete();
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default Completable metadataPush(Payload payload) {
    payload.release();
    return Completable.complete();
  }

  /**
   * The response. The Single is subscribed as soon as this returns, on the same thread (the event
   * loop, or the handler executor), so its work starts at once; the caller's cancel disposes it.
   */
  default Single<Payload> requestResponse(Payload payload) {
    payload.release();
    return Single.error(StreamErrorException.application("request-response not supported"));
  }

  default Flowable<Payload> requestStream(Payload payload) {
    payload.release();
    return Flowable.error(StreamErrorException.application("request-stream not supported"));
  }

  /**
   * A channel opened with {@code first}; {@code inbound} carries the requester's later payloads
   * (subscribe to it at most once; disposing it stops only the inbound half).
   */
  default Flowable<Payload> requestChannel(Payload first, Flowable<Payload> inbound) {
    first.release();
    return Flowable.error(StreamErrorException.application("request-channel not supported"));
  }
}
