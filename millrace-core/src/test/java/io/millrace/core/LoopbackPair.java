package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;

/**
 * A client and a server engine wired back to back in memory on one test loop: what one flushes
 * reaches the other as a read batch. Protocol behaviour end to end, without sockets.
 */
final class LoopbackPair implements AutoCloseable {
  final TestLoop loop = new TestLoop();
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
    client = new End();
    server = new End();
    client.peer = server;
    server.peer = client;
    client.engine = ConnectionEngine.client(client, clientConfig, clientResponder);
    server.engine = ConnectionEngine.server(server, serverConfig, acceptor);
    loop.run(
        () -> {
          server.engine.start(null, null);
          client.engine.start(null, null);
        });
    loop.drain();
  }

  /** One side's transport. */
  final class End implements Transport {
    ConnectionEngine engine;
    End peer;
    final List<ByteBuf> pending = new ArrayList<>();
    boolean closed;
    long framesSent;

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
      if (closed) {
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
      loop.executor.execute(
          () -> {
            for (ByteBuf frame : batch) {
              try {
                if (!peer.closed) {
                  peer.engine.onFrame(frame);
                }
              } finally {
                frame.release();
              }
            }
            if (!peer.closed) {
              peer.engine.onReadComplete();
            }
          });
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
    public void setReading(boolean reading) {}

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      for (ByteBuf frame : pending) {
        frame.release();
      }
      pending.clear();
      loop.executor.execute(() -> engine.onTransportClosed(null));
      peer.close();
    }

    @Override
    public String peerAddress() {
      return "loopback";
    }
  }

  @Override
  public void close() {
    loop.run(client::close);
    loop.drain();
    loop.close();
  }
}
