package io.millrace.transport.netty;

import io.millrace.core.Acceptor;
import io.millrace.core.AsyncAcceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.core.internal.ReassemblyBudget;
import io.millrace.core.internal.ResumeSessions;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.ErrorFrame;
import io.millrace.frame.FrameHeader;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An RSocket server over TCP.
 *
 * <pre>{@code
 * TcpServer server = TcpServer.builder()
 *     .bindAddress("127.0.0.1", 7878)
 *     .acceptor((setup, connection) -> myResponder)
 *     .bind();
 * ...
 * server.shutdown();                                  // stop accepting, drain every connection
 * if (!server.awaitTermination(30, TimeUnit.SECONDS)) {
 *   server.shutdownNow();                             // give up on the stragglers
 * }
 * }</pre>
 *
 * <p>Each accepted connection gets its own engine on one event loop of the server's worker group.
 * TCP_NODELAY is on; every limit of {@link ConnectionConfig} applies per connection, and two apply
 * to the server as a whole: {@link Builder#maxConnections} and {@link Builder#maxReassemblyBytes}.
 *
 * <p>Shutdown, as grpc-java's: {@link #shutdown()} stops accepting and closes every connection
 * gracefully (ERROR[CONNECTION_CLOSE], requests already received are answered, later ones get
 * ERROR[REJECTED], each connection closes when its streams are done and the client has closed its
 * side, or after the drain timeout); {@link #shutdownNow()} closes every connection at once; {@link
 * #awaitTermination} waits for the last connection and the event loops. {@link #close()} is a
 * shutdown that waits for the drain timeout and then forces what is left.
 */
public final class TcpServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(TcpServer.class.getName());

  private final Channel serverChannel;
  private final ConnectionGroup connections;
  private final ConnectionConfig config;

  private TcpServer(Channel serverChannel, ConnectionGroup connections, ConnectionConfig config) {
    this.serverChannel = serverChannel;
    this.connections = connections;
    this.config = config;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The address the server listens on (with the actual port when bound to port 0). */
  public InetSocketAddress address() {
    return (InetSocketAddress) serverChannel.localAddress();
  }

  public int port() {
    return address().getPort();
  }

  /** Connections open right now. */
  public int connectionCount() {
    return connections.size();
  }

  /**
   * Stops accepting connections and closes every open one gracefully; returns at once. Idempotent.
   */
  public void shutdown() {
    serverChannel.close();
    connections.shutdown();
  }

  /** Stops accepting and closes every connection at once; returns at once. */
  public void shutdownNow() {
    serverChannel.close();
    connections.shutdownNow();
  }

  public boolean isShutdown() {
    return connections.isShutdown();
  }

  /** Whether every connection has closed and the event loops have stopped. */
  public boolean isTerminated() {
    return connections.isTerminated();
  }

  /** Waits until terminated after a shutdown; returns whether it is. */
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return connections.awaitTermination(timeout, unit);
  }

  /** Blocks until the server has terminated (after a shutdown from another thread). */
  public void awaitTermination() throws InterruptedException {
    while (!awaitTermination(1, TimeUnit.DAYS)) {
      // keep waiting
    }
  }

  /**
   * Shuts down gracefully, waits for the drain timeout (and a little more for the event loops),
   * then closes what is left at once.
   */
  @Override
  public void close() {
    shutdown();
    boolean interrupted = false;
    try {
      long wait = config.drainTimeout().toMillis() + 1000;
      if (!awaitTermination(wait, TimeUnit.MILLISECONDS)) {
        shutdownNow();
        awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      interrupted = true;
      shutdownNow();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Configures and binds a {@link TcpServer}. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private ConnectionConfig config = ConnectionConfig.DEFAULT;
    private Acceptor acceptor;
    private AsyncAcceptor asyncAcceptor;
    private int maxConnections = 65_536;
    private long maxReassemblyBytes = 256L << 20;
    private long maxResumeBytes = 256L << 20;
    private final SocketSettings socket = new SocketSettings();

    private Builder() {}

    public Builder bindAddress(String host, int port) {
      this.host = Objects.requireNonNull(host);
      this.port = port;
      return this;
    }

    public Builder config(ConnectionConfig config) {
      this.config = Objects.requireNonNull(config);
      return this;
    }

    /** Decides each SETUP on the event loop; replaces an {@link #asyncAcceptor}. */
    public Builder acceptor(Acceptor acceptor) {
      this.acceptor = Objects.requireNonNull(acceptor);
      this.asyncAcceptor = null;
      return this;
    }

    /** Decides each SETUP later without blocking the loop; replaces an {@link #acceptor}. */
    public Builder asyncAcceptor(AsyncAcceptor acceptor) {
      this.asyncAcceptor = Objects.requireNonNull(acceptor);
      this.acceptor = null;
      return this;
    }

    /**
     * Connections served at once; a connection beyond it gets ERROR[REJECTED_SETUP] and is closed
     * before anything of it is read. Default 65,536.
     */
    public Builder maxConnections(int maxConnections) {
      if (maxConnections < 1) {
        throw new IllegalArgumentException("max connections must be positive");
      }
      this.maxConnections = maxConnections;
      return this;
    }

    /**
     * Memory for fragmented messages in progress on all connections together; breaking it closes
     * the connection that did with CONNECTION_ERROR. Each connection also has its own limit, {@link
     * ConnectionConfig#maxReassemblyBytesPerConnection()}. Default 256 MiB.
     */
    public Builder maxReassemblyBytes(long bytes) {
      this.maxReassemblyBytes = bytes;
      return this;
    }

    /**
     * With resumption on ({@link ConnectionConfig#resumption()}): the bytes all sessions together
     * may hold for their clients (frames not yet confirmed, including those of sessions waiting for
     * their client to come back). Above it, senders are held back and the session detached longest
     * is ended to make room. Default 256 MiB.
     */
    public Builder maxResumeBytes(long bytes) {
      if (bytes < 1) {
        throw new IllegalArgumentException("max resume bytes must be positive");
      }
      this.maxResumeBytes = bytes;
      return this;
    }

    /** Worker event loops serving connections (each connection stays on one). Default 1. */
    public Builder eventLoopThreads(int threads) {
      socket.eventLoopThreads(threads);
      return this;
    }

    /**
     * Outbound bytes queued per connection above which streams pause ({@code high}) and below which
     * they resume ({@code low}). Default 128 KiB and 256 KiB.
     */
    public Builder writeBufferWaterMarks(int low, int high) {
      socket.waterMarks(low, high);
      return this;
    }

    /** The allocator for frame buffers and socket reads. Default: Netty's default allocator. */
    public Builder allocator(ByteBufAllocator allocator) {
      socket.allocator(allocator);
      return this;
    }

    /** Binds and returns the running server; throws when the address cannot be bound. */
    public TcpServer bind() throws InterruptedException {
      if (acceptor == null && asyncAcceptor == null) {
        throw new IllegalStateException("an acceptor is required");
      }
      EventLoopGroup boss = EventLoops.newGroup(1, "millrace-accept");
      EventLoopGroup workers = EventLoops.newGroup(socket.eventLoopThreads, "millrace-server");
      ConnectionGroup connections = new ConnectionGroup(workers, boss);
      ConnectionConfig config = this.config;
      Acceptor acceptor = this.acceptor;
      AsyncAcceptor asyncAcceptor = this.asyncAcceptor;
      int maxConnections = this.maxConnections;
      ReassemblyBudget budget = ReassemblyBudget.forServer(maxReassemblyBytes);
      ResumeSessions sessions =
          config.resumption() == null
              ? null
              : new ResumeSessions(config.resumption(), maxResumeBytes);
      AtomicInteger admitted = new AtomicInteger();
      ServerBootstrap bootstrap =
          new ServerBootstrap()
              .group(boss, workers)
              .channel(EventLoops.serverChannel())
              .option(ChannelOption.SO_REUSEADDR, true)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
              .childOption(ChannelOption.ALLOCATOR, socket.allocator)
              .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                      // Reserved atomically: the worker loops accept concurrently.
                      if (admitted.incrementAndGet() > maxConnections) {
                        admitted.decrementAndGet();
                        refuse(channel, maxConnections);
                        return;
                      }
                      channel.closeFuture().addListener(f -> admitted.decrementAndGet());
                      ConnectionEngine engine =
                          FrameHandler.install(
                              channel,
                              config,
                              transport ->
                                  ConnectionEngine.resumableServer(
                                      transport,
                                      config,
                                      acceptor,
                                      asyncAcceptor,
                                      budget,
                                      sessions));
                      engine.start(null, null);
                      connections.add(engine);
                    }
                  });
      try {
        Channel channel = bootstrap.bind(host, port).sync().channel();
        return new TcpServer(channel, connections, config);
      } catch (InterruptedException | RuntimeException e) {
        workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        throw e;
      }
    }

    /** Answers a connection beyond the limit with REJECTED_SETUP, then closes it. */
    private static void refuse(SocketChannel channel, int maxConnections) {
      LOG.log(
          Level.WARNING,
          "refusing {0}: the server is at its limit of {1} connections",
          channel.remoteAddress(),
          maxConnections);
      ByteBuf error =
          ErrorFrame.encode(
              channel.alloc(),
              FrameHeader.LENGTH_PREFIX_SIZE,
              0,
              ErrorCode.REJECTED_SETUP,
              "the server is at its limit of " + maxConnections + " connections");
      error.setMedium(0, error.readableBytes() - FrameHeader.LENGTH_PREFIX_SIZE);
      // Half-close after the ERROR and linger briefly: closing with the client's SETUP unread would
      // reset the connection and could destroy the ERROR before the client reads it.
      channel
          .writeAndFlush(error)
          .addListener(
              written -> {
                if (!written.isSuccess()) {
                  channel.close();
                  return;
                }
                channel
                    .shutdownOutput()
                    .addListener(
                        shut ->
                            channel
                                .eventLoop()
                                .schedule(() -> channel.close(), 2, TimeUnit.SECONDS));
              });
      channel.pipeline().addLast(new DiscardInbound());
    }
  }

  /** Drops what a refused client sends, and closes when it closes its side. */
  private static final class DiscardInbound extends io.netty.channel.ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
      io.netty.util.ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(io.netty.channel.ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
        ctx.close();
      }
    }

    @Override
    public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
