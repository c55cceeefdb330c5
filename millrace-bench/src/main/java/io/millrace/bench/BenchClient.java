package io.millrace.bench;

import java.util.concurrent.atomic.LongAdder;

/**
 * The client side of a {@link BenchSystem}: one connection with one event-loop thread. The
 * harness's drivers build windows, ping-pong and open-loop load on {@link #requestResponse}.
 */
public interface BenchClient extends AutoCloseable {

  /**
   * Sends one request-response; {@code onResponse} runs when the response arrives (on the client's
   * event loop, or whatever thread the system calls back on). Must be callable from that callback
   * itself and from any other thread.
   */
  void requestResponse(Runnable onResponse);

  /**
   * As {@link #requestResponse(Runnable)}, with {@code onFailure} run instead when the call fails.
   * The systems the open-loop scenarios use override it; by default a failed call is only reported
   * by the system itself and runs neither callback.
   */
  default void requestResponse(Runnable onResponse, Runnable onFailure) {
    requestResponse(onResponse);
  }

  /**
   * Starts sending fire-and-forget messages as fast as the transport accepts them, pausing while
   * the transport is not writable (never buffering without bound); each message sent increments
   * {@code sent}. Runs until {@link #close}.
   */
  void startFireAndForget(LongAdder sent);

  /**
   * Starts one endless request-stream; the client grants credit in batches (as a well-behaved
   * consumer would) and each item received increments {@code received}. Runs until {@link #close}.
   */
  void startStream(LongAdder received);

  /**
   * Starts one endless request-channel: the client sends payloads as fast as the server's credit
   * and the transport allow, the server echoes them, and each echo received increments {@code
   * received}. Runs until {@link #close}.
   */
  void startChannel(LongAdder received);

  /**
   * Whether {@link #fireAndForgetFromThisThread} is implemented: fire-and-forget issued by an
   * application thread with the system's own backpressure.
   */
  default boolean sendsFireAndForgetFromThreads() {
    return false;
  }

  /**
   * Sends fire-and-forget messages from the calling thread (not the event loop) while {@code
   * running} holds, waiting whenever the system says it cannot take more; each message sent
   * increments {@code sent}.
   */
  default void fireAndForgetFromThisThread(
      LongAdder sent, java.util.function.BooleanSupplier running) throws InterruptedException {
    throw new UnsupportedOperationException("fire-and-forget from an application thread");
  }

  /**
   * The client's one I/O thread. The harness paces open-loop load there, so that requests leave
   * without a thread hand-off per request (which on one core would measure the hand-off).
   */
  java.util.concurrent.ScheduledExecutorService eventLoop();

  @Override
  void close();
}
