package io.millrace.transport.netty;

import io.millrace.core.internal.LentFrame;
import io.millrace.core.internal.Transport;
import io.millrace.core.internal.TransportListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One end of an in-JVM connection: frames pass to the other end as buffers, with no socket, no copy
 * and no framing, from one event loop to the other (or the same).
 *
 * <p>It keeps the semantics of a socket, limits included. A flush hands the frames written since
 * the last one to the peer's loop. The bytes handed over and not yet taken by the peer's engine
 * count against this end's write-buffer water marks: above the high mark this end is not writable
 * until the peer has taken enough to fall under the low mark, so a peer that stops reading holds
 * its writer back exactly as a full socket does. Frames longer than the maximum frame length are
 * reported as over TCP. A graceful close hands over an end of stream after the last frame and
 * closes once the peer's end of stream arrives (or at the deadline); an immediate close drops what
 * is in flight both ways.
 *
 * <p>State is confined to this end's executor, except {@link #inFlight} (written by the peer when
 * it takes frames) and {@link #writable} (read by any thread).
 */
final class InJvmTransport implements Transport {
  /** Changes only when a resumed session moves this end to its own loop ({@link #moveTo}). */
  private volatile EventExecutor executor;

  private final ByteBufAllocator alloc;
  private final int maxFrameLength;
  private final WriteBufferWaterMark waterMark;
  private final SocketAddress localAddress;
  private final SocketAddress remoteAddress;
  private InJvmTransport peer;

  private TransportListener listener = FrameHandler.NOBODY;
  private final List<ByteBuf> unflushed = new ArrayList<>();
  private long unflushedBytes;
  private final AtomicLong inFlight = new AtomicLong();
  private volatile boolean writable = true;

  private final ArrayDeque<ByteBuf> received = new ArrayDeque<>();
  private boolean reading = true;
  private boolean peerEnded;
  private boolean inputClosedSignalled;
  private boolean closing;
  private boolean closed;
  private ScheduledFuture<?> closeDeadline;

  private InJvmTransport(
      EventExecutor executor,
      ByteBufAllocator alloc,
      int maxFrameLength,
      WriteBufferWaterMark waterMark,
      SocketAddress localAddress,
      SocketAddress remoteAddress) {
    this.executor = executor;
    this.alloc = alloc;
    this.maxFrameLength = maxFrameLength;
    this.waterMark = waterMark;
    this.localAddress = localAddress;
    this.remoteAddress = remoteAddress;
  }

  /** Two connected ends, each with its own loop, allocator, frame limit and water marks. */
  static InJvmTransport[] pair(
      EventExecutor clientLoop,
      ByteBufAllocator clientAlloc,
      int clientMaxFrameLength,
      WriteBufferWaterMark clientWaterMark,
      SocketAddress clientAddress,
      EventExecutor serverLoop,
      ByteBufAllocator serverAlloc,
      int serverMaxFrameLength,
      WriteBufferWaterMark serverWaterMark,
      SocketAddress serverAddress) {
    InJvmTransport client =
        new InJvmTransport(
            clientLoop,
            clientAlloc,
            clientMaxFrameLength,
            clientWaterMark,
            clientAddress,
            serverAddress);
    InJvmTransport server =
        new InJvmTransport(
            serverLoop,
            serverAlloc,
            serverMaxFrameLength,
            serverWaterMark,
            serverAddress,
            clientAddress);
    client.peer = server;
    server.peer = client;
    return new InJvmTransport[] {client, server};
  }

  @Override
  public void setListener(TransportListener listener) {
    this.listener = listener;
    if (closed) {
      executor.execute(listener::onTransportClosed);
    }
  }

  /** Whether a listener other than the initial nobody was set. */
  boolean hasListener() {
    return listener != FrameHandler.NOBODY;
  }

  @Override
  public EventExecutor executor() {
    return executor;
  }

  /**
   * Moves this end to {@code target} once the task that asks has returned, as a channel's
   * deregistration does: a move asked from the listener of a frame (a RESUME taken by a session
   * that lives on another loop) would otherwise let the {@link #deliver} loop that called it go on
   * handing later frames to the new listener on the old loop while the new loop does too (two
   * threads in one connection's reassembly: CI lost a fragment of a 64 KiB payload that way). Tasks
   * the peer queued on the old loop meanwhile find they are on the wrong loop and follow it ({@link
   * #onOwnLoop}).
   */
  @Override
  public void moveTo(EventExecutor target, Runnable then) {
    EventExecutor from = executor;
    if (target == from) {
      target.execute(then);
      return;
    }
    Runnable move =
        () -> {
          executor = target;
          if (!run(target, then)) {
            executor = from; // the new loop has shut down: closed here, where it runs now
            close();
          }
        };
    if (!run(from, move)) {
      // The old loop is shutting down: the end is closed rather than moved from under a task that
      // may still be delivering; the client resumes again, on a connection accepted elsewhere.
      executor = target;
      close();
    }
  }

  /**
   * Whether the caller runs on this end's loop; if not (the end moved after the task was queued),
   * the task is queued again where the end now lives.
   */
  private boolean onOwnLoop(Runnable task) {
    EventExecutor current = executor;
    if (current.inEventLoop()) {
      return true;
    }
    run(current, task);
    return false;
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  @Override
  public int headroom() {
    return 0;
  }

  @Override
  public void write(ByteBuf frame) {
    if (closed) {
      frame.release();
      return;
    }
    unflushed.add(frame);
    unflushedBytes += frame.readableBytes();
  }

  @Override
  public void flush() {
    if (unflushed.isEmpty()) {
      return;
    }
    if (closed) {
      releaseAll(unflushed);
      return;
    }
    ByteBuf[] batch = unflushed.toArray(new ByteBuf[0]);
    long bytes = unflushedBytes;
    unflushed.clear();
    // In flight first, then no longer unflushed: queuedBytes, read off the loop, then tends to
    // count
    // these bytes twice for a moment rather than miss them (plain fields: an estimate either way).
    long now = inFlight.addAndGet(bytes);
    unflushedBytes = 0;
    if (now > waterMark.high() && writable) {
      writable = false;
      listener.onWritabilityChanged();
    }
    InJvmTransport to = peer;
    if (!run(to.executor, () -> to.receive(batch, bytes))) {
      for (ByteBuf frame : batch) {
        frame.release(); // the peer's loop has stopped: the connection is gone
      }
      close();
    }
  }

  /** Runs {@code task} on {@code executor}; false when the executor has shut down. */
  private static boolean run(EventExecutor executor, Runnable task) {
    try {
      executor.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** Peer's executor: frames from the other end. */
  private void receive(ByteBuf[] batch, long bytes) {
    if (!onOwnLoop(() -> receive(batch, bytes))) {
      return;
    }
    if (closed || closing) {
      // Closed: gone, as over a reset socket. Closing: read and dropped to see the end.
      for (ByteBuf frame : batch) {
        frame.release();
      }
      peer.taken(bytes);
      return;
    }
    for (ByteBuf frame : batch) {
      received.add(frame);
    }
    deliver();
  }

  /** Hands received frames to the listener until it stops reading; reports the peer's end. */
  private void deliver() {
    long taken = 0;
    while (reading && !closed && !received.isEmpty()) {
      ByteBuf frame = received.poll();
      taken += frame.readableBytes();
      if (frame.readableBytes() > maxFrameLength) {
        frame.release();
        peer.taken(taken);
        failTooLong(frame.readableBytes());
        return;
      }
      try {
        listener.onFrame(new LentFrame(frame)); // lent as over every transport: cannot be kept
      } finally {
        frame.release();
      }
    }
    if (taken > 0) {
      peer.taken(taken);
      if (!closed) {
        listener.onReadComplete();
      }
    }
    if (reading && !closed && received.isEmpty() && peerEnded && !inputClosedSignalled) {
      inputClosedSignalled = true;
      listener.onInputClosed();
    }
  }

  private void failTooLong(long length) {
    releaseReceived();
    listener.onFrameTooLong(length);
  }

  /** Any executor: the peer took {@code bytes} of what this end handed over. */
  private void taken(long bytes) {
    if (inFlight.addAndGet(-bytes) <= waterMark.low() && !writable) {
      run(
          executor,
          () -> {
            if (!executor.inEventLoop()) {
              taken(0); // moved meanwhile: check again where this end lives now
              return;
            }
            if (!writable && !closed && inFlight.get() <= waterMark.low()) {
              writable = true;
              listener.onWritabilityChanged();
            }
          });
    }
  }

  @Override
  public boolean isWritable() {
    return writable;
  }

  @Override
  public long queuedBytes() {
    return unflushedBytes + Math.max(0, inFlight.get());
  }

  @Override
  public void setReading(boolean reading) {
    if (reading == this.reading) {
      return;
    }
    this.reading = reading;
    if (reading) {
      run(
          executor,
          () -> {
            if (onOwnLoop(this::deliver)) {
              deliver();
            }
          });
    }
  }

  @Override
  public void close() {
    if (!onOwnLoop(this::close) || closed) {
      return;
    }
    closed = true;
    if (closeDeadline != null) {
      closeDeadline.cancel(false);
    }
    releaseAll(unflushed);
    unflushedBytes = 0;
    releaseReceived();
    TransportListener closedListener = listener;
    if (!run(executor, closedListener::onTransportClosed)) {
      closedListener.onTransportClosed();
    }
    InJvmTransport to = peer;
    run(to.executor, to::close);
  }

  @Override
  public void closeGracefully(long timeoutMillis) {
    if (closing || closed) {
      return;
    }
    closing = true;
    releaseReceived();
    flush();
    InJvmTransport to = peer;
    if (!run(to.executor, to::peerEnded)) {
      close();
      return;
    }
    if (peerEnded) {
      close(); // the peer is done too
      return;
    }
    closeDeadline = executor.schedule(this::close, timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /** This end's executor: the peer will send nothing more. */
  private void peerEnded() {
    if (!onOwnLoop(this::peerEnded) || closed || peerEnded) {
      return;
    }
    peerEnded = true;
    if (closing) {
      close();
    } else {
      deliver();
    }
  }

  private void releaseReceived() {
    long bytes = 0;
    for (ByteBuf frame; (frame = received.poll()) != null; ) {
      bytes += frame.readableBytes();
      frame.release();
    }
    if (bytes > 0) {
      peer.taken(bytes);
    }
  }

  private static void releaseAll(List<ByteBuf> frames) {
    for (ByteBuf frame : frames) {
      frame.release();
    }
    frames.clear();
  }

  @Override
  public SocketAddress remoteAddress() {
    return remoteAddress;
  }

  @Override
  public SocketAddress localAddress() {
    return localAddress;
  }
}
