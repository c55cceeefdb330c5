package io.millrace.core.internal;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A client and a server engine wired back to back in memory on one test loop: what one flushes
 * reaches the other as a read batch. Protocol behaviour end to end, without sockets. Both share one
 * {@link ManualTimers} clock.
 */
final class LoopbackPair implements AutoCloseable {
  final TestLoop loop = new TestLoop();
  final ManualTimers timers = new ManualTimers();
  final End client;
  final End server;

  LoopbackPair(ConnectionConfig clientConfig, ConnectionConfig serverConfig, Responder responder) {
    this(clientConfig, serverConfig, (setup, connection) -> responder, Responder.REJECT_ALL);
  }

  LoopbackPair(
      ConnectionConfig clientConfig,
      ConnectionConfig serverConfig,
      Acceptor acceptor,
      Responder clientResponder) {
    client = new End("client");
    server = new End("server");
    client.peer = server;
    server.peer = client;
    client.engine = ConnectionEngine.client(client, clientConfig, clientResponder, timers);
    server.engine = ConnectionEngine.server(server, serverConfig, acceptor, null, null, timers);
    loop.run(
        () -> {
          server.engine.start(null, null);
          client.engine.start(null, null);
        });
    loop.drain();
  }

  /** One side's transport. */
  final class End implements Transport {
    final String name;
    ConnectionEngine engine;
    TransportListener listener;

    TransportListener listener() {
      return listener != null ? listener : engine;
    }

    @Override
    public void setListener(TransportListener listener) {
      this.listener = listener;
    }

    End peer;
    final List<ByteBuf> pending = new ArrayList<>();
    final ArrayDeque<ByteBuf> inbound = new ArrayDeque<>();
    boolean closed;
    boolean reading = true;
    boolean outputShut;
    long framesSent;

    End(String name) {
      this.name = name;
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
      if (closed || outputShut) {
        frame.release();
        return;
      }
      framesSent++;
      pending.add(frame);
    }

    @Override
    public void flush() {
      if (pending.isEmpty()) {
        return;
      }
      List<ByteBuf> batch = new ArrayList<>(pending);
      pending.clear();
      loop.executor.execute(() -> peer.receive(batch));
    }

    private void receive(List<ByteBuf> batch) {
      if (closed) {
        batch.forEach(ByteBuf::release);
        return;
      }
      inbound.addAll(batch);
      deliver();
    }

    private void deliver() {
      boolean any = false;
      ByteBuf frame;
      while (reading && !closed && (frame = inbound.poll()) != null) {
        any = true;
        try {
          listener().onFrame(new LentFrame(frame)); // lent, as a real transport lends it
        } finally {
          frame.release();
        }
      }
      if (closed) {
        inbound.forEach(ByteBuf::release);
        inbound.clear();
      }
      if (any && !closed) {
        listener().onReadComplete();
      }
    }

    @Override
    public boolean isWritable() {
      return true;
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
      if (closed) {
        return;
      }
      closed = true;
      pending.forEach(ByteBuf::release);
      pending.clear();
      inbound.forEach(ByteBuf::release);
      inbound.clear();
      loop.executor.execute(() -> listener().onTransportClosed());
      peer.close();
    }

    /**
     * Delivers what was written, then the end of this side's output, then closes once both ended.
     */
    @Override
    public void closeGracefully(long timeoutMillis) {
      if (closed || outputShut) {
        return;
      }
      flush();
      outputShut = true;
      loop.executor.execute(
          () -> {
            if (!peer.closed) {
              peer.listener().onInputClosed();
            }
            if (peer.outputShut) {
              close();
            }
          });
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
          client.engine.dispose();
          server.engine.dispose();
        });
    loop.drain();
    loop.close();
  }
}
