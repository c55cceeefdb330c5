package io.millrace.transport.netty;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.core.internal.ReconnectingConnection;
import io.millrace.core.internal.ResumableSession;
import io.millrace.core.internal.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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
  private final ConnectionGroup connections;
  private final ConnectionConfig config;
  private final Responder responder;
  private final SocketSettings socket;
  private final int connectTimeoutMillis;

  private TcpClient(Builder b) {
    this.group = EventLoops.newGroup(b.socket.eventLoopThreads, "millrace-client");
    this.connections = new ConnectionGroup(group);
    this.config = b.config;
    this.responder = b.responder;
    this.socket = b.socket.copy();
    this.connectTimeoutMillis = b.connectTimeoutMillis;
    if (config.resumption() != null) {
      ConnectionEngine.newResumeToken(); // seeds the token generator here, not on a loop
    }
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
    return connect(InetSocketAddress.createUnresolved(host, port), null, setupMetadata, setupData);
  }

  /**
   * Connects from {@code localAddress} (null: any), for example one of several loopback addresses
   * when a single one would run out of source ports, and sends SETUP (metadata and data nullable;
   * ownership taken).
   */
  public CompletableFuture<Connection> connect(
      InetSocketAddress remoteAddress,
      InetSocketAddress localAddress,
      ByteBuf setupMetadata,
      ByteBuf setupData) {
    if (connections.isShutdown()) {
      release(setupMetadata, setupData);
      return CompletableFuture.failedFuture(new IllegalStateException("the client is shut down"));
    }
    if (config.reconnect() == null) {
      InetSocketAddress remote =
          remoteAddress.isUnresolved()
              ? new InetSocketAddress(remoteAddress.getHostString(), remoteAddress.getPort())
              : remoteAddress;
      return connectOnce(group, remote, localAddress, setupMetadata, setupData, true);
    }
    // Every connection of a reconnecting client is on one loop. Each new connection resolves the
    // name again (Netty's resolver, on connect): without a session to carry on, a server that moved
    // or a name that did not resolve yet is found on a later attempt. A resumable session still
    // goes back to the address it reached.
    InetSocketAddress target =
        remoteAddress.isUnresolved()
            ? remoteAddress
            : InetSocketAddress.createUnresolved(
                remoteAddress.getHostString(), remoteAddress.getPort());
    AtomicBoolean first = new AtomicBoolean(true);
    ReconnectingConnection connection =
        new ReconnectingConnection(
            group.next(),
            socket.allocator,
            config,
            (loop, metadata, data) ->
                connectOnce(
                    (EventLoop) loop,
                    target,
                    first.getAndSet(false) ? localAddress : anyPort(localAddress),
                    metadata,
                    data,
                    false),
            setupMetadata,
            setupData);
    connections.add(connection);
    return connection.start();
  }

  /**
   * The same local address on any port: a reconnecting client's old port may still be in TIME_WAIT.
   */
  private static InetSocketAddress anyPort(InetSocketAddress local) {
    return local == null ? null : new InetSocketAddress(local.getAddress(), 0);
  }

  /**
   * One connection on {@code loops}, SETUP sent; tracked for shutdown unless a reconnecting
   * connection tracks it. Fails with {@link RejectedExecutionException} once the client is shut
   * down.
   */
  private CompletableFuture<Connection> connectOnce(
      EventLoopGroup loops,
      InetSocketAddress remote,
      InetSocketAddress localAddress,
      ByteBuf setupMetadata,
      ByteBuf setupData,
      boolean track) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    if (connections.isShutdown()) {
      release(setupMetadata, setupData);
      result.completeExceptionally(new RejectedExecutionException("the client is shut down"));
      return result;
    }
    ConnectionConfig config = this.config;
    Responder responder = this.responder;
    // A resumed session reconnects to the address it first reached, never to another server
    // behind the same name (rsocket-java #1116), on the event loop it lives on.
    InetSocketAddress[] reached = {remote};
    byte[] token = config.resumption() == null ? null : ConnectionEngine.newResumeToken();
    ResumableSession.Reconnector reconnector =
        session -> reconnect(session, reached[0], localAddress);
    Bootstrap bootstrap =
        bootstrap(loops)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    ConnectionEngine engine =
                        FrameHandler.install(
                            channel,
                            config,
                            transport ->
                                config.resumption() == null
                                    ? ConnectionEngine.client(transport, config, responder)
                                    : ConnectionEngine.resumableClient(
                                        transport, config, responder, reconnector, token));
                    channel.attr(Attributes.ENGINE).set(engine);
                  }
                });
    ChannelFuture connect =
        localAddress == null ? bootstrap.connect(remote) : bootstrap.connect(remote, localAddress);
    connect.addListener(
        (ChannelFuture f) -> {
          if (!f.isSuccess()) {
            release(setupMetadata, setupData);
            result.completeExceptionally(f.cause());
            return;
          }
          Channel channel = f.channel();
          reached[0] = (InetSocketAddress) channel.remoteAddress();
          ConnectionEngine engine = channel.attr(Attributes.ENGINE).get();
          try {
            engine.start(setupMetadata, setupData);
            if (track) {
              connections.add(engine);
            }
            result.complete(engine);
          } catch (RuntimeException e) {
            channel.close();
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  private Bootstrap bootstrap(EventLoopGroup group) {
    return new Bootstrap()
        .group(group)
        .channel(EventLoops.clientChannel())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
        .option(ChannelOption.ALLOCATOR, socket.allocator)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
        .option(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark);
  }

  /** One reconnect attempt of a resumable session, on its own event loop. */
  private void reconnect(
      ResumableSession session, InetSocketAddress remote, InetSocketAddress localAddress) {
    if (connections.isShutdown()) {
      session.giveUp("the client is shut down");
      return;
    }
    Bootstrap bootstrap =
        bootstrap((EventLoop) session.executor())
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    channel.attr(RESUMING).set(FrameHandler.installForResumption(channel, config));
                  }
                });
    ChannelFuture connect =
        localAddress == null
            ? bootstrap.connect(remote)
            : bootstrap.connect(remote, anyPort(localAddress));
    connect.addListener(
        (ChannelFuture f) -> {
          if (f.isSuccess()) {
            session.attachNew(f.channel().attr(RESUMING).get());
          } else {
            session.reconnectFailed(f.cause());
          }
        });
  }

  private static final io.netty.util.AttributeKey<Transport> RESUMING =
      io.netty.util.AttributeKey.valueOf("millrace.resuming");

  private static void release(ByteBuf metadata, ByteBuf data) {
    if (metadata != null) {
      metadata.release();
    }
    if (data != null) {
      data.release();
    }
  }

  /** Closes every connection gracefully (see {@link Connection#close()}); returns at once. */
  public void shutdown() {
    connections.shutdown();
  }

  /** Closes every connection at once; returns at once. */
  public void shutdownNow() {
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

  /**
   * Closes every connection gracefully, waits for the drain timeout (and a little more for the
   * event loops), then closes what is left at once.
   */
  @Override
  public void close() {
    shutdown();
    boolean interrupted = false;
    try {
      if (!awaitTermination(config.drainTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
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
