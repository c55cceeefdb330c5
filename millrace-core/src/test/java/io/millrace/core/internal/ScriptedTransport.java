package io.millrace.core.internal;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A transport that records what the engine writes and lets a test play the peer by injecting
 * frames. Everything runs on the test loop; frames are decoded as they are written and released.
 * Time is {@link ManualTimers}: it moves only with {@link #advance}. Buffers come from a {@link
 * TrackingAllocator}, so a test can assert that everything it made the engine allocate was freed.
 */
final class ScriptedTransport implements Transport {
  final TestLoop loop;
  final ManualTimers timers = new ManualTimers();
  final List<WireFrame> written = new ArrayList<>();

  /** Frames injected while reading was suspended, delivered when it resumes. */
  final ArrayDeque<ByteBuf> held = new ArrayDeque<>();

  ConnectionEngine engine;
  TransportListener listener;

  TransportListener listener() {
    return listener != null ? listener : engine;
  }

  @Override
  public void setListener(TransportListener listener) {
    this.listener = listener;
  }

  volatile boolean writable = true;
  long queuedBytes;
  boolean reading = true;
  boolean closed;
  boolean closedGracefully;
  boolean coalesce;
  int batchesWritten;
  int flushes;
  int unflushed;

  ScriptedTransport(TestLoop loop) {
    this.loop = loop;
  }

  static ScriptedTransport server(TestLoop loop, ConnectionConfig config, Acceptor acceptor) {
    ScriptedTransport transport = new ScriptedTransport(loop);
    transport.engine =
        ConnectionEngine.server(transport, config, acceptor, null, null, transport.timers);
    loop.run(() -> transport.engine.start(null, null));
    return transport;
  }

  static ScriptedTransport client(TestLoop loop, ConnectionConfig config, Responder responder) {
    return client(loop, config, responder, false);
  }

  /** A client whose transport batches frames ({@code coalesce}), which the engine reads once. */
  static ScriptedTransport client(
      TestLoop loop, ConnectionConfig config, Responder responder, boolean coalesce) {
    ScriptedTransport transport = new ScriptedTransport(loop);
    transport.coalesce = coalesce;
    transport.engine = ConnectionEngine.client(transport, config, responder, transport.timers);
    loop.run(() -> transport.engine.start(null, null));
    return transport;
  }

  /** Delivers frames as one read batch, releasing them afterwards; honours read suspension. */
  void inject(ByteBuf... frames) {
    loop.run(
        () -> {
          for (ByteBuf frame : frames) {
            held.add(frame);
          }
          deliverHeld();
        });
  }

  private void deliverHeld() {
    ByteBuf frame;
    boolean any = false;
    while (reading && !closed && (frame = held.poll()) != null) {
      any = true;
      try {
        listener().onFrame(new LentFrame(frame)); // lent, as a real transport lends it
      } finally {
        frame.release();
      }
    }
    if (any || !held.isEmpty()) {
      listener().onReadComplete();
    }
    if (closed) {
      releaseHeld();
    }
  }

  private void releaseHeld() {
    ByteBuf frame;
    while ((frame = held.poll()) != null) {
      frame.release();
    }
  }

  /** Moves the engine's clock forward, running due timers, on the loop. */
  void advance(Duration by) {
    loop.run(() -> timers.advance(by));
    loop.drain();
  }

  /** Frames written since the last call; waits for queued loop tasks (scheduled flushes) first. */
  List<WireFrame> take() {
    loop.drain();
    return loop.call(
        () -> {
          List<WireFrame> copy = new ArrayList<>(written);
          written.clear();
          return copy;
        });
  }

  void setWritable(boolean writable) {
    loop.run(
        () -> {
          this.writable = writable;
          listener().onWritabilityChanged();
        });
  }

  /** The peer closes its side of the connection. */
  void peerClosesInput() {
    loop.run(() -> listener().onInputClosed());
    loop.drain();
  }

  @Override
  public EventExecutor executor() {
    return loop.executor;
  }

  @Override
  public ByteBufAllocator alloc() {
    return loop.alloc;
  }

  @Override
  public int headroom() {
    return 0;
  }

  @Override
  public void write(ByteBuf frame) {
    try {
      written.add(WireFrame.decode(frame));
      unflushed++;
    } finally {
      frame.release();
    }
  }

  @Override
  public boolean coalescesFrames() {
    return coalesce;
  }

  /** Splits a batch at its 3-byte length prefixes and records every frame in it. */
  @Override
  public void writeFrames(ByteBuf frames, int frameCount) {
    try {
      batchesWritten++;
      while (frames.isReadable()) {
        int length = frames.readUnsignedMedium();
        ByteBuf frame = frames.readSlice(length);
        written.add(WireFrame.decode(frame));
        unflushed++;
      }
    } finally {
      frames.release();
    }
  }

  /** Runs inside each flush, as Netty tells of writability from inside {@code flush()}. */
  Runnable onFlush;

  @Override
  public void flush() {
    flushes++;
    unflushed = 0;
    Runnable r = onFlush;
    if (r != null) {
      r.run();
    }
  }

  @Override
  public boolean isWritable() {
    return writable;
  }

  @Override
  public long queuedBytes() {
    return queuedBytes;
  }

  @Override
  public void setReading(boolean reading) {
    boolean resumed = reading && !this.reading;
    this.reading = reading;
    if (resumed && !held.isEmpty()) {
      loop.executor.execute(this::deliverHeld);
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      loop.executor.execute(
          () -> {
            releaseHeld();
            listener().onTransportClosed();
          });
    }
  }

  @Override
  public void closeGracefully(long timeoutMillis) {
    closedGracefully = true;
    close();
  }

  @Override
  public javax.net.ssl.SSLSession tlsSession() {
    return tlsSession;
  }

  /** What {@link #tlsSession()} says: null, as over plain TCP, unless a test sets one. */
  javax.net.ssl.SSLSession tlsSession;

  @Override
  public SocketAddress remoteAddress() {
    return InetSocketAddress.createUnresolved("scripted-peer", 1);
  }

  @Override
  public SocketAddress localAddress() {
    return InetSocketAddress.createUnresolved("scripted-local", 2);
  }
}
