package io.millrace.observer;

/**
 * Receives a stream of values, as in gRPC: any number of {@link #onNext}, then at most one of
 * {@link #onError} or {@link #onCompleted}. Calls on one observer must not overlap (one thread at a
 * time, or a happens-before edge between them).
 */
public interface StreamObserver<V> {
  void onNext(V value);

  /**
   * The stream failed; an RSocket ERROR arrives as {@link io.millrace.core.StreamErrorException}.
   */
  void onError(Throwable t);

  void onCompleted();
}
