package io.millrace.core;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;

/**
 * What a transport (TCP, WebSocket, in-JVM) gives a {@link ConnectionEngine}: one ordered, reliable
 * byte stream of frames. Implemented by transports, not by applications.
 *
 * <p>Threading: every method is called on {@link #executor()} only, and the transport calls the
 * engine's {@code on*} methods on that executor only.
 */
public interface Transport {

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
  void write(io.netty.buffer.ByteBuf frame);

  /**
   * Whether frames may be concatenated into one buffer, each preceded by its 3-byte length, and
   * written with {@link #writeFrames}: true for byte-stream transports (TCP, Unix sockets), false
   * where each frame is its own message (WebSocket).
   */
  default boolean coalescesFrames() {
    return false;
  }

  /**
   * Queues bytes holding whole frames, each with its 3-byte length prefix, without flushing. Only
   * called when {@link #coalescesFrames()} is true. Takes ownership of {@code frames}.
   */
  default void writeFrames(io.netty.buffer.ByteBuf frames) {
    frames.release();
    throw new UnsupportedOperationException("this transport does not coalesce frames");
  }

  /** Flushes the frames queued so far to the peer. */
  void flush();

  /** False while the transport's outbound queue is above its high-water mark. */
  boolean isWritable();

  /** Bytes queued for the peer and not yet written to the socket. */
  long queuedBytes();

  /** Starts or stops reading from the peer (backpressure towards a peer that does not read). */
  void setReading(boolean reading);

  /** Closes the connection; the transport then calls {@link ConnectionEngine#onTransportClosed}. */
  void close();

  /** The peer's address, for logs. */
  String peerAddress();
}
