package io.millrace.observer;

/**
 * The sending side of a call, with flow control in both directions, as grpc-java's
 * CallStreamObserver.
 *
 * <p>Sending: {@link #isReady()} says whether the peer has granted credit and the socket takes
 * more; {@link #setOnReadyHandler} is run (on the connection's event loop) when it becomes ready
 * again. Calling {@link #onNext} while not ready is allowed: Millrace keeps up to the prefetch
 * ({@link io.millrace.streams.StreamsOptions#prefetch()}) payloads waiting, and beyond that a
 * caller on another thread waits (blocks) until the peer asks for more, so a producer is held to
 * the reader's pace with bounded memory, never an unbounded queue. On the event loop, where waiting
 * is impossible, going beyond that bound fails the call: a handler on the loop should follow
 * isReady and the on-ready handler, or run on a handler executor.
 *
 * <p>Receiving: by default the other direction is read as it arrives, on the event loop. A
 * requester then grants the responder unbounded credit at once, as a reactive {@code subscribe()}
 * does: nothing queues, since each value goes to the observer as it is read, and the transport
 * holds a faster responder back (an RPC client interceptor that moves responses to another thread
 * gets that demand too, and bounds its own queue). A responder grants its caller a window (its
 * {@code prefetch}, and the streams layer's prefetch ahead of that), topped up as values are
 * delivered, so that the caller's {@code isReady()} follows the handler's reading. After {@link
 * #disableAutoInboundFlowControl()} nothing more is delivered than {@link #request(int)} asks for
 * (the streams layer's prefetch is granted ahead and waits there; an RPC call asks one more for its
 * trailer).
 */
public interface CallStreamObserver<V> extends StreamObserver<V> {

  boolean isReady();

  /** Run on the event loop whenever the call may send again after {@link #isReady} was false. */
  void setOnReadyHandler(Runnable onReadyHandler);

  /**
   * Stops requesting inbound values automatically; call it before the call starts (in {@code
   * beforeStart}, or in the handler before it returns) and then {@link #request(int)} as values are
   * wanted. A requester that calls it after {@code beforeStart} gets {@link IllegalStateException}.
   */
  void disableAutoInboundFlowControl();

  /** Asks for {@code count} more inbound values (with auto flow control disabled). */
  void request(int count);
}
