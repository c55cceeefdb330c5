package io.millrace.transport.netty;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionEngine;
import io.millrace.core.Responder;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Connects RSocket clients over TCP. One {@code TcpClient} owns an event-loop group and may open
 * many connections; closing it closes them all.
 *
 * <pre>{@code
 * try (TcpClient client = TcpClient.builder().build()) {
 *   Connection connection = client.connect("127.0.0.1", 7878).get();
 *   connection.requestResponse(null, Unpooled.copiedBuffer("hi", UTF_8), listener);
 * }
 * }</pre>
 */
public final class TcpClient implements AutoCloseable {
  private final EventLoopGroup group;
  private final ConnectionConfig config;
  private final Responder responder;
  private final SocketSettings socket;
  private final int connectTimeoutMillis;

  private TcpClient(Builder b) {
    this.group = EventLoops.newGroup(b.socket.eventLoopThreads, "millrace-client");
    this.config = b.config;
    this.responder = b.responder;
    this.socket = b.socket.copy();
    this.connectTimeoutMillis = b.connectTimeoutMillis;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Connects and sends a SETUP without metadata or data. */
  public CompletableFuture<Connection> connect(String host, int port) {
    return connect(host, port, null, null);
  }

  /**
   * Connects and sends SETUP with the given metadata and data (nullable; ownership taken). The
   * future completes once SETUP is written: requests may follow at once, as the protocol allows.
   */
  public CompletableFuture<Connection> connect(
      String host, int port, ByteBuf setupMetadata, ByteBuf setupData) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    ConnectionConfig config = this.config;
    Responder responder = this.responder;
    Bootstrap bootstrap =
        new Bootstrap()
            .group(group)
            .channel(EventLoops.clientChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.ALLOCATOR, socket.allocator)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    ConnectionEngine engine =
                        FrameHandler.install(
                            channel,
                            config,
                            transport -> ConnectionEngine.client(transport, config, responder));
                    channel.attr(Attributes.ENGINE).set(engine);
                  }
                });
    ChannelFuture connect = bootstrap.connect(host, port);
    connect.addListener(
        (ChannelFuture f) -> {
          if (!f.isSuccess()) {
            release(setupMetadata, setupData);
            result.completeExceptionally(f.cause());
            return;
          }
          Channel channel = f.channel();
          ConnectionEngine engine = channel.attr(Attributes.ENGINE).get();
          try {
            engine.start(setupMetadata, setupData);
            result.complete(engine);
          } catch (RuntimeException e) {
            channel.close();
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  private static void release(ByteBuf metadata, ByteBuf data) {
    if (metadata != null) {
      metadata.release();
    }
    if (data != null) {
      data.release();
    }
  }

  /** Closes every connection and shuts the event loops down. */
  @Override
  public void close() {
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Configures a {@link TcpClient}. */
  public static final class Builder {
    private ConnectionConfig config = ConnectionConfig.DEFAULT;
    private Responder responder = Responder.REJECT_ALL;
    private final SocketSettings socket = new SocketSettings();
    private int connectTimeoutMillis = 10_000;

    private Builder() {}

    public Builder config(ConnectionConfig config) {
      this.config = Objects.requireNonNull(config);
      return this;
    }

    /** Serves requests the server sends on the connection. Default: rejects them. */
    public Builder responder(Responder responder) {
      this.responder = Objects.requireNonNull(responder);
      return this;
    }

    /** Event loops for this client's connections (each connection stays on one). Default 1. */
    public Builder eventLoopThreads(int threads) {
      socket.eventLoopThreads(threads);
      return this;
    }

    /** Outbound water marks per connection, as for {@link TcpServer.Builder}. */
    public Builder writeBufferWaterMarks(int low, int high) {
      socket.waterMarks(low, high);
      return this;
    }

    /** The allocator for frame buffers and socket reads. Default: Netty's default allocator. */
    public Builder allocator(ByteBufAllocator allocator) {
      socket.allocator(allocator);
      return this;
    }

    public Builder connectTimeoutMillis(int millis) {
      this.connectTimeoutMillis = millis;
      return this;
    }

    public TcpClient build() {
      return new TcpClient(this);
    }
  }
}
