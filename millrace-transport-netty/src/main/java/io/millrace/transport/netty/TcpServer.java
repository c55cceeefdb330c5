package io.millrace.transport.netty;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionEngine;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * An RSocket server over TCP.
 *
 * <pre>{@code
 * TcpServer server = TcpServer.builder()
 *     .bindAddress("127.0.0.1", 7878)
 *     .acceptor((setup, connection) -> myResponder)
 *     .bind();
 * ...
 * server.close();
 * }</pre>
 *
 * <p>Each accepted connection gets its own {@link ConnectionEngine} on one event loop of the
 * server's worker group. TCP_NODELAY is on; every limit of {@link ConnectionConfig} applies.
 */
public final class TcpServer implements AutoCloseable {
  private final Channel serverChannel;
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;

  private TcpServer(Channel serverChannel, EventLoopGroup boss, EventLoopGroup workers) {
    this.serverChannel = serverChannel;
    this.boss = boss;
    this.workers = workers;
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

  /** Blocks until the server is closed by another thread. */
  public void awaitClose() throws InterruptedException {
    serverChannel.closeFuture().await();
  }

  /** Stops accepting, closes every connection and shuts the event loops down. */
  @Override
  public void close() {
    serverChannel.close().syncUninterruptibly();
    workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Configures and binds a {@link TcpServer}. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private ConnectionConfig config = ConnectionConfig.DEFAULT;
    private Acceptor acceptor;
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

    public Builder acceptor(Acceptor acceptor) {
      this.acceptor = Objects.requireNonNull(acceptor);
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
      if (acceptor == null) {
        throw new IllegalStateException("an acceptor is required");
      }
      EventLoopGroup boss = EventLoops.newGroup(1, "millrace-accept");
      EventLoopGroup workers = EventLoops.newGroup(socket.eventLoopThreads, "millrace-server");
      ConnectionConfig config = this.config;
      Acceptor acceptor = this.acceptor;
      ServerBootstrap bootstrap =
          new ServerBootstrap()
              .group(boss, workers)
              .channel(EventLoops.serverChannel())
              .option(ChannelOption.SO_REUSEADDR, true)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childOption(ChannelOption.ALLOCATOR, socket.allocator)
              .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                      FrameHandler.install(
                              channel,
                              config,
                              transport -> ConnectionEngine.server(transport, config, acceptor))
                          .start(null, null);
                    }
                  });
      try {
        Channel channel = bootstrap.bind(host, port).sync().channel();
        return new TcpServer(channel, boss, workers);
      } catch (InterruptedException | RuntimeException e) {
        workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        throw e;
      }
    }
  }
}
