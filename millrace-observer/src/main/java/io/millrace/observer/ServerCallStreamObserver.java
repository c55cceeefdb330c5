package io.millrace.observer;

/** A responder's view of its call: the response observer, with cancellation by the peer. */
public interface ServerCallStreamObserver<V> extends CallStreamObserver<V> {

  /** Whether the peer cancelled (or the connection went): stop the work, nothing more is sent. */
  boolean isCancelled();

  /** Run once, on the event loop, when the peer cancels or the connection goes. */
  void setOnCancelHandler(Runnable onCancelHandler);
}
