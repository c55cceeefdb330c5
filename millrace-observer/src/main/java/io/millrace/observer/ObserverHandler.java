package io.millrace.observer;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;

/**
 * Answers calls in the gRPC style; {@link ObserverResponder#of} serves it. Every response observer
 * is a {@link ServerCallStreamObserver}: {@code isCancelled}, an on-cancel handler, {@code isReady}
 * and an on-ready handler for sending at the peer's pace.
 *
 * <p>Backpressure is automatic: {@code onNext} faster than the peer reads is held back by credit
 * and the socket (see {@link CallStreamObserver}). Stream and channel handlers run off the event
 * loop by default ({@link ObserverResponder}), so one that sends in a loop simply waits in {@code
 * onNext}; on the loop ({@link ObserverResponder#onEventLoop}) a handler should follow {@code
 * isReady}.
 *
 * <p>Errors: {@code onError} with a {@link StreamErrorException} sends its code and message; any
 * other exception, or one thrown here, sends APPLICATION_ERROR with a fixed text unless the
 * connection's config sends handler messages.
 *
 * <p>Ownership: requests belong to the method (heap copies by default: no release needed); values
 * given to a response observer belong to Millrace. The defaults reject the interaction.
 */
public interface ObserverHandler {

  default void fireAndForget(Payload payload) {
    payload.release();
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default void metadataPush(Payload payload) {
    payload.release();
  }

  /** Answer with one {@code onNext} and {@code onCompleted} (none: an empty answer), or onError. */
  default void requestResponse(Payload payload, StreamObserver<Payload> response) {
    payload.release();
    response.onError(StreamErrorException.application("request-response not supported"));
  }

  default void requestStream(Payload payload, StreamObserver<Payload> responses) {
    payload.release();
    responses.onError(StreamErrorException.application("request-stream not supported"));
  }

  /**
   * A channel: the returned observer receives the requester's values, the one that opened the
   * channel first; {@code responses} sends this side's.
   */
  default StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
    responses.onError(StreamErrorException.application("request-channel not supported"));
    return new StreamObserver<>() {
      @Override
      public void onNext(Payload value) {
        value.release();
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    };
  }
}
