package io.millrace.core.internal;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A resumable client and a resumption-enabled server on one test loop, joined by in-memory
 * connections that the test can break: what one side flushes reaches the other as a read batch,
 * unless the connection is cut first. The connections frame like TCP (3-byte headroom, batches of
 * prefixed frames), so the replay store sees what it sees on a socket. The client reconnects
 * through {@link #reconnect}, which opens a new connection and a new server engine, as a server
 * accepting a socket would.
 */
final class ResumeHarness implements AutoCloseable {
  final TestLoop loop = new TestLoop();
  final ManualTimers timers = new ManualTimers();
  final ResumeSessions sessions;
  final ConnectionConfig serverConfig;
  final Acceptor acceptor;
  final ConnectionEngine client;
  final ConnectionEngine server;
  final List<ConnectionEngine> serverEngines = new ArrayList<>();
  Pipe current;
  int connections;
  boolean refuseReconnects;

  /** When positive, each new connection is cut after this many frames have crossed it. */
  int cutAfterFrames;

  ResumeHarness(
      ConnectionConfig clientConfig,
      ConnectionConfig serverConfig,
      Responder serverResponder,
      Responder clientResponder,
      long serverResumeBytes) {
    this.serverConfig = serverConfig;
    this.acceptor = (setup, connection) -> serverResponder;
    this.sessions = new ResumeSessions(serverConfig.resumption(), serverResumeBytes);
    Pipe pipe = newPipe();
    client =
        ConnectionEngine.resumableClient(
            pipe.clientEnd, clientConfig, clientResponder, this::reconnect, timers);
    server = newServerEngine(pipe.serverEnd);
    loop.run(
        () -> {
          server.start(null, null);
          client.start(null, null);
        });
    loop.drain();
  }

  private ConnectionEngine newServerEngine(End end) {
    ConnectionEngine engine =
        ConnectionEngine.resumableServer(end, serverConfig, acceptor, null, null, sessions, timers);
    serverEngines.add(engine);
    return engine;
  }

  private Pipe newPipe() {
    connections++;
    current = new Pipe(cutAfterFrames);
    return current;
  }

  /** The client's reconnector: a new connection at once, unless refused. */
  private void reconnect(ResumableSession session) {
    if (refuseReconnects) {
      session.reconnectFailed(new IOException("connection refused"));
      return;
    }
    Pipe pipe = newPipe();
    ConnectionEngine engine = newServerEngine(pipe.serverEnd);
    engine.start(null, null);
    session.attachNew(pipe.clientEnd);
  }

  /** Breaks the current connection now: what is in flight is lost, both sides see it close. */
  void cut() {
    loop.run(() -> current.cut());
  }

  /** Runs the loop until quiet, advancing the clock by {@code millis} each round, bounded. */
  void settle(int rounds, long millis) {
    for (int i = 0; i < rounds; i++) {
      loop.drain();
      loop.run(() -> timers.advance(java.time.Duration.ofMillis(millis)));
    }
    loop.drain();
  }

  /** One in-memory connection. */
  final class Pipe {
    final End clientEnd = new End("client");
    final End serverEnd = new End("server");
    int framesLeft;

    Pipe(int cutAfterFrames) {
      clientEnd.pipe = this;
      serverEnd.pipe = this;
      clientEnd.peer = serverEnd;
      serverEnd.peer = clientEnd;
      framesLeft = cutAfterFrames > 0 ? cutAfterFrames : Integer.MAX_VALUE;
    }

    void cut() {
      clientEnd.cut();
      serverEnd.cut();
    }
  }

  /** One side of a {@link Pipe}. */
  final class End implements Transport {
    final String name;
    Pipe pipe;
    End peer;
    TransportListener listener;
    final List<ByteBuf> pending = new ArrayList<>();
    final ArrayDeque<ByteBuf> inbound = new ArrayDeque<>();
    boolean closed;
    boolean reading = true;
    boolean blackHole;

    End(String name) {
      this.name = name;
    }

    @Override
    public void setListener(TransportListener listener) {
      this.listener = listener;
      if (closed) {
        loop.executor.execute(listener::onTransportClosed); // as a real transport reports it
      }
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
      return FrameHeader.LENGTH_PREFIX_SIZE;
    }

    @Override
    public boolean coalescesFrames() {
      return true;
    }

    @Override
    public void write(ByteBuf frame) {
      if (closed) {
        frame.release();
        return;
      }
      frame.setMedium(frame.readerIndex(), frame.readableBytes() - 3);
      pending.add(frame);
    }

    @Override
    public void writeFrames(ByteBuf frames, int frameCount) {
      if (closed) {
        frames.release();
        return;
      }
      pending.add(frames);
    }

    @Override
    public void flush() {
      if (pending.isEmpty()) {
        return;
      }
      List<ByteBuf> batch = new ArrayList<>(pending);
      pending.clear();
      if (blackHole) {
        batch.forEach(ByteBuf::release);
        return;
      }
      loop.executor.execute(() -> peer.receive(batch));
    }

    private void receive(List<ByteBuf> buffers) {
      for (ByteBuf b : buffers) {
        if (closed) {
          b.release();
          continue;
        }
        while (b.isReadable()) {
          int length = b.readUnsignedMedium();
          inbound.add(b.readRetainedSlice(length));
        }
        b.release();
      }
      deliver();
    }

    private void deliver() {
      boolean any = false;
      ByteBuf frame;
      while (reading && !closed && (frame = inbound.poll()) != null) {
        any = true;
        try {
          listener.onFrame(frame);
        } finally {
          frame.release();
        }
        if (--pipe.framesLeft == 0) {
          pipe.cut();
        }
      }
      if (closed) {
        inbound.forEach(ByteBuf::release);
        inbound.clear();
        return;
      }
      if (any) {
        listener.onReadComplete();
      }
    }

    /** Abrupt end: nothing more is delivered, the listener hears the close from a task. */
    void cut() {
      if (closed) {
        return;
      }
      closed = true;
      pending.forEach(ByteBuf::release);
      pending.clear();
      inbound.forEach(ByteBuf::release);
      inbound.clear();
      TransportListener l = listener;
      loop.executor.execute(l::onTransportClosed);
    }

    @Override
    public boolean isWritable() {
      return !closed;
    }

    @Override
    public long queuedBytes() {
      return 0;
    }

    @Override
    public void setReading(boolean reading) {
      boolean resumed = reading && !this.reading;
      this.reading = reading;
      if (resumed) {
        loop.executor.execute(this::deliver);
      }
    }

    @Override
    public void close() {
      pipe.cut();
    }

    @Override
    public void closeGracefully(long timeoutMillis) {
      if (closed) {
        return;
      }
      flush();
      loop.executor.execute(pipe::cut); // after what was flushed has been delivered
    }

    @Override
    public SocketAddress remoteAddress() {
      return InetSocketAddress.createUnresolved(peer.name, 1);
    }

    @Override
    public SocketAddress localAddress() {
      return InetSocketAddress.createUnresolved(name, 1);
    }
  }

  @Override
  public void close() {
    loop.run(
        () -> {
          client.dispose();
          for (ConnectionEngine e : serverEngines) {
            e.dispose();
          }
        });
    loop.drain();
    loop.close();
  }
}
