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
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Connects RSocket clients over TCP, TLS, WebSocket (ws, wss), Unix domain sockets or in-JVM
 * channels. One {@code MillraceClient} owns its event loops and may open many connections, to any
 * of these; closing it closes them all.
 *
 * <pre>{@code
 * try (MillraceClient client = MillraceClient.builder().build()) {
 *   Connection connection = client.connect("ws://127.0.0.1:8080/rsocket").get();
 *   connection.requestResponse(null, Unpooled.copiedBuffer("hi", UTF_8), listener);
 * }
 * }</pre>
 *
 * <p>A connection's future completes once SETUP is written, which is after the TLS handshake and
 * the WebSocket upgrade where there are any; it fails with their error (an untrusted certificate, a
 * name that does not match it, an HTTP refusal of the upgrade) otherwise.
 */
public final class MillraceClient implements AutoCloseable {
  private final EventLoopGroup group;
  private final IoKind ioKind;
  private final ClientTls tls;
  private final WebSocketOptions webSocket;
  private final ConnectionGroup connections;
  private final ConnectionConfig config;
  private final Responder responder;
  private final SocketSettings socket;
  private final int connectTimeoutMillis;

  private MillraceClient(Builder b) {
    this.ioKind = b.socket.ioKind().requireAvailable();
    this.group = EventLoops.newGroup(ioKind, b.socket.eventLoopThreads, "millrace-client");
    this.tls = b.tls;
    this.webSocket = b.webSocket;
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

  /**
   * Connects to {@code uri} ({@code tcp://H:P}, {@code tls://H:P}, {@code ws://H:P/PATH}, {@code
   * wss://H:P/PATH}, {@code unix:///path}, {@code local://NAME}) and sends a SETUP without metadata
   * or data.
   */
  public CompletableFuture<Connection> connect(String uri) {
    return connect(TransportUri.parse(uri), null, null);
  }

  /**
   * Connects to {@code uri} and sends SETUP with the given metadata and data (nullable; ownership
   * taken).
   */
  public CompletableFuture<Connection> connect(
      TransportUri uri, ByteBuf setupMetadata, ByteBuf setupData) {
    return connect(uri, null, setupMetadata, setupData);
  }

  /** Connects over TCP and sends a SETUP without metadata or data. */
  public CompletableFuture<Connection> connect(String host, int port) {
    return connect(host, port, null, null);
  }

  /**
   * Connects and sends SETUP with the given metadata and data (nullable; ownership taken). The
   * future completes once SETUP is written: requests may follow at once, as the protocol allows.
   */
  public CompletableFuture<Connection> connect(
      String host, int port, ByteBuf setupMetadata, ByteBuf setupData) {
    return connect(TransportUri.tcp(host, port), null, setupMetadata, setupData);
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
    return connect(
        TransportUri.tcp(remoteAddress.getHostString(), remoteAddress.getPort()),
        localAddress,
        setupMetadata,
        setupData);
  }

  private CompletableFuture<Connection> connect(
      TransportUri uri, InetSocketAddress localAddress, ByteBuf setupMetadata, ByteBuf setupData) {
    if (connections.isShutdown()) {
      release(setupMetadata, setupData);
      return CompletableFuture.failedFuture(new IllegalStateException("the client is shut down"));
    }
    EventLoopGroup loops = group;
    if (config.reconnect() == null) {
      SocketAddress remote = uri.socketAddress(ioKind);
      if (remote instanceof InetSocketAddress) {
        InetSocketAddress inet = (InetSocketAddress) remote;
        remote = new InetSocketAddress(inet.getHostString(), inet.getPort());
      }
      return connectOnce(loops, uri, remote, localAddress, setupMetadata, setupData, true);
    }
    // Every connection of a reconnecting client is on one loop. Each new connection resolves the
    // name again (Netty's resolver, on connect): without a session to carry on, a server that moved
    // or a name that did not resolve yet is found on a later attempt. A resumable session still
    // goes back to the address it reached.
    SocketAddress target = uri.socketAddress(ioKind);
    AtomicBoolean first = new AtomicBoolean(true);
    ReconnectingConnection connection =
        new ReconnectingConnection(
            loops.next(),
            socket.allocator,
            config,
            (loop, metadata, data) ->
                connectOnce(
                    (EventLoop) loop,
                    uri,
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
      TransportUri uri,
      SocketAddress remote,
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
    SocketAddress[] reached = {remote};
    byte[] token = config.resumption() == null ? null : ConnectionEngine.newResumeToken();
    ResumableSession.Reconnector reconnector =
        session -> reconnect(session, uri, reached[0], localAddress);
    if (uri.scheme() == TransportUri.Scheme.LOCAL) {
      EventLoop loop = loops.next();
      loop.execute(
          () -> {
            InJvmTransport transport;
            try {
              transport =
                  InJvmServers.connect(
                      uri.host(),
                      loop,
                      socket.allocator,
                      config.maxFrameLength(),
                      socket.waterMark);
            } catch (java.net.ConnectException | RuntimeException e) {
              release(setupMetadata, setupData);
              result.completeExceptionally(e);
              return;
            }
            ConnectionEngine engine =
                config.resumption() == null
                    ? ConnectionEngine.client(transport, config, responder)
                    : ConnectionEngine.resumableClient(
                        transport, config, responder, reconnector, token);
            if (!transport.hasListener()) {
              transport.setListener(engine);
            }
            try {
              engine.start(setupMetadata, setupData);
              if (track) {
                connections.add(engine);
              }
              result.complete(engine);
            } catch (RuntimeException e) {
              transport.close();
              result.completeExceptionally(e);
            }
          });
      return result;
    }
    Bootstrap bootstrap =
        bootstrap(loops, uri)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel channel) {
                    addHandshakes(channel, uri);
                    ConnectionEngine engine =
                        FrameHandler.install(
                            channel,
                            config,
                            uri.scheme().webSocket(),
                            true,
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
          if (channel.remoteAddress() instanceof InetSocketAddress) {
            reached[0] = channel.remoteAddress();
          }
          channel
              .attr(READY)
              .get()
              .addListener(
                  ready -> {
                    if (ready.isSuccess()) {
                      start(channel, track, setupMetadata, setupData, result);
                    } else {
                      release(setupMetadata, setupData);
                      result.completeExceptionally(ready.cause());
                      channel.close();
                    }
                  });
        });
    return result;
  }

  /** SETUP goes out once the handshakes under RSocket are done. */
  private void start(
      Channel channel,
      boolean track,
      ByteBuf setupMetadata,
      ByteBuf setupData,
      CompletableFuture<Connection> result) {
    channel.pipeline().remove(ClientReadiness.class);
    FrameHandler frames = channel.pipeline().get(FrameHandler.class);
    if (frames.isWebSocket()) {
      frames.startWebSocket();
    }
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
  }

  private Bootstrap bootstrap(EventLoopGroup group, TransportUri uri) {
    Bootstrap bootstrap =
        new Bootstrap()
            .group(group)
            .option(ChannelOption.ALLOCATOR, socket.allocator)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark);
    boolean unix = uri.scheme() == TransportUri.Scheme.UNIX;
    bootstrap.channel(ioKind.clientChannel(unix));
    if (ioKind.halfClosure(unix)) {
      bootstrap.option(ChannelOption.ALLOW_HALF_CLOSURE, true);
    }
    if (uri.scheme().ip()) {
      bootstrap.option(ChannelOption.TCP_NODELAY, true);
    } else if (socket.unixSocketBuffer > 0) {
      bootstrap
          .option(ChannelOption.SO_SNDBUF, socket.unixSocketBuffer)
          .option(ChannelOption.SO_RCVBUF, socket.unixSocketBuffer);
    }
    return bootstrap;
  }

  private void addHandshakes(Channel channel, TransportUri uri) {
    addHandshakes(channel, uri, connectTimeoutMillis);
  }

  private void addHandshakes(Channel channel, TransportUri uri, int timeoutMillis) {
    ChannelPromise ready =
        ClientPipelines.addHandshakes(
            channel,
            uri,
            uri.scheme().secure() ? clientTls() : null,
            webSocket,
            config.maxFrameLength(),
            timeoutMillis);
    channel.attr(READY).set(ready);
  }

  /** The TLS given to the builder, else the JDK's trust store with hostname verification. */
  private ClientTls clientTls() {
    ClientTls t = tls;
    if (t == null) {
      synchronized (this) {
        t = defaultTls;
        if (t == null) {
          try {
            t = ClientTls.builder().build();
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
          defaultTls = t;
        }
      }
    }
    return t;
  }

  private ClientTls defaultTls;

  private static final io.netty.util.AttributeKey<ChannelFuture> READY =
      io.netty.util.AttributeKey.valueOf(MillraceClient.class, "millrace.ready");

  /** One reconnect attempt of a resumable session, on its own event loop. */
  private void reconnect(
      ResumableSession session,
      TransportUri uri,
      SocketAddress remote,
      InetSocketAddress localAddress) {
    if (connections.isShutdown()) {
      session.giveUp("the client is shut down");
      return;
    }
    if (uri.scheme() == TransportUri.Scheme.LOCAL) {
      try {
        session.attachNew(
            InJvmServers.connect(
                uri.host(),
                session.executor(),
                socket.allocator,
                config.maxFrameLength(),
                socket.waterMark));
      } catch (java.net.ConnectException | RuntimeException e) {
        session.reconnectFailed(e);
      }
      return;
    }
    // An attempt that takes longer than the keepalive's max lifetime is given up for the next one
    // rather than waiting out the connect timeout: a black hole during a WebSocket upgrade held an
    // attempt 10 s, longer than the session's keepalive would have waited. The bound caps the TCP
    // connect, and each handshake's time from the connect on; it is a time limit, not an idle
    // check, so a keepalive too short for the link's handshakes fails every attempt (a floor of
    // 2 s was tried: the chaos test's black holes then cost 2 s each and its wss run timed out).
    int bound = (int) Math.min(connectTimeoutMillis, config.maxLifetime().toMillis());
    Bootstrap bootstrap =
        bootstrap((EventLoop) session.executor(), uri)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, bound)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel channel) {
                    addHandshakes(channel, uri, bound);
                    channel
                        .attr(RESUMING)
                        .set(
                            FrameHandler.installForResumption(
                                channel, config, uri.scheme().webSocket()));
                  }
                });
    ChannelFuture connect =
        localAddress == null
            ? bootstrap.connect(remote)
            : bootstrap.connect(remote, anyPort(localAddress));
    connect.addListener(
        (ChannelFuture f) -> {
          if (!f.isSuccess()) {
            session.reconnectFailed(f.cause());
            return;
          }
          Channel channel = f.channel();
          channel
              .attr(READY)
              .get()
              .addListener(
                  ready -> {
                    if (ready.isSuccess()) {
                      channel.pipeline().remove(ClientReadiness.class);
                      FrameHandler frames = channel.pipeline().get(FrameHandler.class);
                      if (frames.isWebSocket()) {
                        frames.startWebSocket();
                      }
                      session.attachNew(channel.attr(RESUMING).get());
                    } else {
                      channel.close();
                      session.reconnectFailed(ready.cause());
                    }
                  });
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

  /** Configures a {@link MillraceClient}. */
  public static final class Builder {
    private ConnectionConfig config = ConnectionConfig.DEFAULT;
    private Responder responder = Responder.REJECT_ALL;
    private final SocketSettings socket = new SocketSettings();
    private int connectTimeoutMillis = 10_000;
    private ClientTls tls;
    private WebSocketOptions webSocket = WebSocketOptions.DEFAULT;

    private Builder() {}

    /**
     * TLS for {@code tls} and {@code wss} connections. Default: servers the JDK's trust store
     * trusts, with hostname verification.
     */
    public Builder tls(ClientTls tls) {
      this.tls = Objects.requireNonNull(tls);
      return this;
    }

    /** Subprotocols and extra headers for WebSocket upgrades. */
    public Builder webSocket(WebSocketOptions options) {
      this.webSocket = Objects.requireNonNull(options);
      return this;
    }

    /** Socket I/O for TCP and Unix socket connections. Default {@link IoKind#preferred()}. */
    public Builder ioKind(IoKind kind) {
      socket.ioKind(kind);
      return this;
    }

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

    /** Outbound water marks per connection, as for {@link MillraceServer.Builder}. */
    public Builder writeBufferWaterMarks(int low, int high) {
      socket.waterMarks(low, high);
      return this;
    }

    /**
     * SO_SNDBUF and SO_RCVBUF of Unix socket connections, as for {@link MillraceServer.Builder}.
     */
    public Builder unixSocketBufferBytes(int bytes) {
      socket.unixSocketBuffer(bytes);
      return this;
    }

    /** The allocator for frame buffers and socket reads. Default: Netty's default allocator. */
    public Builder allocator(ByteBufAllocator allocator) {
      socket.allocator(allocator);
      return this;
    }

    /**
     * How long a connect may take, TCP connect and the TLS and WebSocket handshakes included.
     * Default 10 s. A resumable session's reconnects use the keepalive's max lifetime instead when
     * that is shorter, so that a black-holed attempt does not hold up the next.
     */
    public Builder connectTimeoutMillis(int millis) {
      if (millis <= 0) {
        throw new IllegalArgumentException("the connect timeout must be positive: " + millis);
      }
      this.connectTimeoutMillis = millis;
      return this;
    }

    public MillraceClient build() {
      return new MillraceClient(this);
    }
  }
}
