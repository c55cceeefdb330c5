package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;

/**
 * A transport that records what the engine writes and lets a test play the peer by injecting
 * frames. Everything runs on the test loop; frames are decoded as they are written and released.
 */
final class ScriptedTransport implements Transport {
  final TestLoop loop;
  final List<WireFrame> written = new ArrayList<>();
  ConnectionEngine engine;
  boolean writable = true;
  long queuedBytes;
  boolean reading = true;
  boolean closed;
  boolean coalesce;
  int batchesWritten;
  int flushes;
  int unflushed;

  ScriptedTransport(TestLoop loop) {
    this.loop = loop;
  }

  static ScriptedTransport server(TestLoop loop, ConnectionConfig config, Acceptor acceptor) {
    ScriptedTransport transport = new ScriptedTransport(loop);
    transport.engine = ConnectionEngine.server(transport, config, acceptor);
    loop.run(() -> transport.engine.start(null, null));
    return transport;
  }

  static ScriptedTransport client(TestLoop loop, ConnectionConfig config, Responder responder) {
    ScriptedTransport transport = new ScriptedTransport(loop);
    transport.engine = ConnectionEngine.client(transport, config, responder);
    loop.run(() -> transport.engine.start(null, null));
    return transport;
  }

  /** Delivers frames as one read batch, releasing them afterwards. */
  void inject(ByteBuf... frames) {
    loop.run(
        () -> {
          for (ByteBuf frame : frames) {
            try {
              engine.onFrame(frame);
            } finally {
              frame.release();
            }
          }
          engine.onReadComplete();
        });
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
          engine.onWritabilityChanged();
        });
  }

  @Override
  public EventExecutor executor() {
    return loop.executor;
  }

  @Override
  public ByteBufAllocator alloc() {
    return PooledByteBufAllocator.DEFAULT;
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
  public void writeFrames(ByteBuf frames) {
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

  @Override
  public void flush() {
    flushes++;
    unflushed = 0;
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
    this.reading = reading;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      loop.executor.execute(() -> engine.onTransportClosed(null));
    }
  }

  @Override
  public String peerAddress() {
    return "scripted";
  }
}
