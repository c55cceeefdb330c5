package io.millrace.observer;

/** A requester's view of its call: the request observer of a channel, and cancellation. */
public interface ClientCallStreamObserver<V> extends CallStreamObserver<V> {

  /**
   * Cancels the call: CANCEL to the peer, and the response observer gets {@code onError} with a
   * {@link io.millrace.core.StreamErrorException} (CANCELED) carrying {@code message}; in the RPC
   * flavour, a {@code StatusException} CANCELLED.
   */
  void cancel(String message, Throwable cause);
}
