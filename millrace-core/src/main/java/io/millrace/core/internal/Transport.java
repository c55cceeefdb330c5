package io.millrace.core.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.net.SocketAddress;

/**
 * What a transport (TCP, WebSocket, in-JVM) gives a {@link ConnectionEngine}: one ordered, reliable
 * byte stream of frames. Implemented by transports, not by applications; not API.
 *
 * <p>Threading: every method is called on {@link #executor()} only (except {@link #isWritable()},
 * which other threads may read), and the transport calls the engine's {@code on*} methods on that
 * executor only.
 *
 * <p>The transport reports what happens to its {@link TransportListener} (the engine, or a {@link
 * ResumableSession} in front of it), which {@link #setListener} may change on the executor: a
 * resumed session takes over the transport of the connection its RESUME arrived on.
 */
public interface Transport {

  /**
   * Who hears about frames and events from now on. Executor only. A transport that has already
   * closed tells the new listener so ({@link TransportListener#onTransportClosed}, from a task).
   */
  void setListener(TransportListener listener);

  /**
   * The position to put in outbound KEEPALIVE frames (bytes of resumable frames received); 0 when
   * the connection is not resumable.
   */
  default long receivedPosition() {
    return 0;
  }

  /**
   * Moves this transport to {@code executor} (a resumed session lives on the loop where it began,
   * which need not be the loop its new connection was accepted on) and then runs {@code then}
   * there, from a task of its own. Reading should be stopped first. The move takes effect once the
   * task that asked for it has returned ({@link #executor()} names the old loop until then), so a
   * delivery in progress on the old loop ends there before the new loop takes over.
   */
  default void moveTo(EventExecutor executor, Runnable then) {
    if (executor != executor()) {
      close();
      throw new UnsupportedOperationException("this transport cannot change event loops");
    }
    executor.execute(then);
  }

  /** The event loop that owns this connection; all engine state is confined to it. */
  EventExecutor executor();

  ByteBufAllocator alloc();

  /**
   * Bytes every outbound frame buffer reserves at its start for the transport, for example 3 for
   * the TCP length prefix; the transport fills them in {@link #write}.
   */
  int headroom();

  /**
   * Queues one frame (starting with {@link #headroom()} reserved bytes) without flushing. Takes
   * ownership of {@code frame}.
   */
  void write(ByteBuf frame);

  /**
   * Whether frames may be concatenated into one buffer, each preceded by its 3-byte length, and
   * written with {@link #writeFrames}: true for byte-stream transports (TCP, Unix sockets), false
   * where each frame is its own message (WebSocket).
   */
  default boolean coalescesFrames() {
    return false;
  }

  /**
   * Queues bytes holding {@code frameCount} whole frames, each with its 3-byte length prefix,
   * without flushing. Only called when {@link #coalescesFrames()} is true. Takes ownership of
   * {@code frames}. The count comes from whoever batched the frames, so that a resumable session
   * can account for the batch without walking it.
   */
  default void writeFrames(ByteBuf frames, int frameCount) {
    frames.release();
    throw new UnsupportedOperationException("this transport does not coalesce frames");
  }

  /** Flushes the frames queued so far to the peer. */
  void flush();

  /** False while the transport's outbound queue is above its high-water mark. Any thread. */
  boolean isWritable();

  /**
   * Bytes queued for the peer and not yet written to the socket. Any thread (a caller's hand-off
   * reads it): an estimate, which must never fail while the loop changes what it counts.
   */
  long queuedBytes();

  /**
   * Stops or resumes taking frames from the peer. Stopping takes effect at once: no {@link
   * ConnectionEngine#onFrame} follows until reading resumes, not even for frames already read into
   * the transport's buffers (they are delivered first when it resumes, from a later loop task,
   * never from within this call).
   */
  void setReading(boolean reading);

  /** Closes the connection at once; queued frames may be lost. */
  void close();

  /**
   * Closes once everything written has reached the socket: flushes, waits for the writes to
   * complete, closes the output side where the transport can (so the peer reads every frame and
   * then the end of the stream, instead of a reset), waits for the peer to close its side, then
   * closes. Frames the peer still sends meanwhile are read and dropped. Everything is bounded by
   * {@code timeoutMillis}, after which the connection is closed at once.
   */
  void closeGracefully(long timeoutMillis);

  SocketAddress remoteAddress();

  SocketAddress localAddress();

  /** The connection's TLS session once its handshake is done, or null when it is not over TLS. */
  default javax.net.ssl.SSLSession tlsSession() {
    return null;
  }
}
