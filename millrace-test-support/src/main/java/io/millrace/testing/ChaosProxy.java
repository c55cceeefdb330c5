package io.millrace.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy for tests that breaks connections on demand, in every way a network does: a reset
 * ({@link #reset()}), a cut in the middle of whatever is passing, even a frame ({@link
 * #cutAfterBytes}), a silent black hole that only a keepalive notices ({@link #blackHole()}),
 * refusing new connections for a while ({@link #refuse}), and delays ({@link #delay}). Bytes pass
 * unchanged otherwise. Listens on 127.0.0.1.
 */
public final class ChaosProxy implements AutoCloseable {
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel server;
  private final InetSocketAddress target;
  private final List<Pair> pairs = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicLong bytesBeforeCut = new AtomicLong(-1);
  private volatile long refuseUntilNanos;
  private volatile long delayMillis;

  private volatile boolean blackHoleNew;

  public ChaosProxy(InetSocketAddress target) throws InterruptedException {
    this.target = target;
    this.server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel inbound) {
                    accept(inbound);
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
  }

  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port());
  }

  /** Connections accepted and passed on so far. */
  public int accepted() {
    return accepted.get();
  }

  /** Connections refused so far. */
  public int refusedCount() {
    return refused.get();
  }

  /** Connections open right now. */
  public int open() {
    return (int) pairs.stream().filter(p -> p.client.isActive()).count();
  }

  /** The open connections' state, for the message of a failed test. */
  public String describe() {
    StringBuilder b = new StringBuilder("delay=" + delayMillis + " cut=" + bytesBeforeCut.get());
    for (Pair p : pairs) {
      b.append(" [")
          .append(describe(p.client))
          .append(" | ")
          .append(describe(p.server))
          .append(p.blackHole ? " black-holed" : "")
          .append(']');
    }
    return b.toString();
  }

  private static String describe(Channel c) {
    if (c == null) {
      return "none";
    }
    io.netty.channel.ChannelOutboundBuffer out = c.unsafe().outboundBuffer();
    return c.remoteAddress()
        + (c.isActive() ? " active" : " closed")
        + (c.isWritable() ? "" : " unwritable")
        + " pending="
        + (out == null ? -1 : out.totalPendingWriteBytes());
  }

  /** Resets every open connection (RST to both sides: SO_LINGER 0, then close). */
  public void reset() {
    for (Pair p : pairs) {
      p.reset();
    }
  }

  /**
   * Cuts every open connection after {@code bytes} more bytes have passed in either direction (the
   * cut falls wherever those bytes end, usually inside a frame), with a reset.
   */
  public void cutAfterBytes(long bytes) {
    bytesBeforeCut.set(bytes);
  }

  /** Stops passing bytes on every open connection without closing it. */
  public void blackHole() {
    for (Pair p : pairs) {
      p.blackHole = true;
    }
  }

  /**
   * Whether connections accepted from now on pass no bytes (a black hole from their first byte, as
   * a peer that accepts and then hangs: a handshake over them never ends).
   */
  public void blackHoleNewConnections(boolean on) {
    blackHoleNew = on;
  }

  /** Refuses (accepts and resets at once) new connections for {@code millis}. */
  public void refuse(long millis) {
    refuseUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /** Delays every chunk passed from now on by {@code millis} (0: none). */
  public void delay(long millis) {
    delayMillis = millis;
  }

  private void accept(SocketChannel inbound) {
    if (System.nanoTime() - refuseUntilNanos < 0) {
      refused.incrementAndGet();
      inbound.config().setOption(ChannelOption.SO_LINGER, 0);
      inbound.eventLoop().execute(inbound::close);
      return;
    }
    accepted.incrementAndGet();
    Pair pair = new Pair(inbound);
    pair.blackHole = blackHoleNew;
    pairs.add(pair);
    inbound.closeFuture().addListener(f -> pairs.remove(pair));
    new Bootstrap()
        .group(inbound.eventLoop())
        .channel(NioSocketChannel.class)
        .option(ChannelOption.AUTO_READ, false)
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(pair.relay(false))
        .connect(target)
        .addListener(
            (ChannelFutureListener)
                f -> {
                  if (!f.isSuccess()) {
                    inbound.close();
                    return;
                  }
                  pair.server = f.channel();
                  inbound.pipeline().addLast(pair.relay(true));
                  inbound.read();
                  pair.server.read();
                });
  }

  /** One proxied connection: client side and server side. */
  private final class Pair {
    final Channel client;
    volatile Channel server;
    volatile boolean blackHole;

    Pair(Channel client) {
      this.client = client;
    }

    void reset() {
      client.eventLoop().execute(this::resetNow);
    }

    void resetNow() {
      for (Channel c : new Channel[] {client, server}) {
        if (c != null && c.isOpen()) {
          try {
            c.config().setOption(ChannelOption.SO_LINGER, 0);
          } catch (ChannelException e) {
            // Closed in between (this may run off the channel's loop): nothing left to reset.
          }
          c.close();
        }
      }
    }

    ChannelInboundHandlerAdapter relay(boolean fromClient) {
      return new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          ByteBuf in = (ByteBuf) msg;
          Channel to = fromClient ? server : client;
          if (blackHole || to == null) {
            in.release();
            ctx.channel().read();
            return;
          }
          long left = bytesBeforeCut.get();
          if (left >= 0) {
            int n = in.readableBytes();
            if (n >= left) {
              bytesBeforeCut.set(-1);
              ByteBuf part = in.readRetainedSlice((int) left);
              in.release();
              to.writeAndFlush(part).addListener(f -> resetNow());
              return;
            }
            bytesBeforeCut.addAndGet(-n);
          }
          long delay = delayMillis;
          if (delay > 0) {
            ctx.executor()
                .schedule(
                    () -> to.writeAndFlush(in).addListener(f -> ctx.channel().read()),
                    delay,
                    TimeUnit.MILLISECONDS);
          } else {
            to.writeAndFlush(in)
                .addListener(
                    f -> {
                      if (f.isSuccess()) {
                        ctx.channel().read();
                      }
                    });
          }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
          Channel other = fromClient ? server : client;
          if (other != null) {
            other.close();
          }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          ctx.close();
        }
      };
    }
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    for (Pair p : pairs) {
      p.resetNow();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
