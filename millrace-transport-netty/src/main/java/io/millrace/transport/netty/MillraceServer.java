package io.millrace.transport.netty;

import io.millrace.core.Acceptor;
import io.millrace.core.AsyncAcceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.ReassemblyBudget;
import io.millrace.core.internal.ResumeSessions;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An RSocket server on one or more listeners: TCP, TLS, WebSocket (ws, wss), Unix domain sockets
 * and in-JVM channels, each given as a {@link TransportUri}.
 *
 * <pre>{@code
 * MillraceServer server = MillraceServer.builder()
 *     .listen("tcp://0.0.0.0:7878")                       // RSocket, WebSocket (and gRPC) on one port
 *     .listen("wss://0.0.0.0:8443/rsocket")
 *     .tls(ServerTls.builder(Path.of("server.pem"), Path.of("server.key")).build())
 *     .acceptor((setup, connection) -> myResponder)
 *     .bind();
 * ...
 * server.shutdown();                                  // stop accepting, drain every connection
 * if (!server.awaitTermination(30, TimeUnit.SECONDS)) {
 *   server.shutdownNow();                             // give up on the stragglers
 * }
 * }</pre>
 *
 * <p>One port, several protocols: a {@code tcp}, {@code tls} or {@code unix} listener tells from
 * the first bytes whether a connection speaks RSocket, opens a WebSocket (an HTTP/1.1 upgrade on
 * the WebSocket path: the {@code ws}/{@code wss} listener's, else {@value
 * TransportUri#DEFAULT_WEBSOCKET_PATH}) or, when a gRPC endpoint is attached ({@link
 * Builder#http2Handoff}), speaks HTTP/2. A {@code ws} or {@code wss} listener takes WebSocket only.
 *
 * <p>Each accepted connection gets its own engine on one event loop of the server's worker group.
 * TCP_NODELAY is on; every limit of {@link ConnectionConfig} applies per connection, and two apply
 * to the server as a whole, across its listeners: {@link Builder#maxConnections} and {@link
 * Builder#maxReassemblyBytes}.
 *
 * <p>Shutdown, as grpc-java's: {@link #shutdown()} stops accepting and closes every connection
 * gracefully (ERROR[CONNECTION_CLOSE], requests already received are answered, later ones get
 * ERROR[REJECTED], each connection closes when its streams are done and the client has closed its
 * side, or after the drain timeout; an HTTP/2 connection handed to the gRPC endpoint gets GOAWAY
 * and closes when its calls are done); {@link #shutdownNow()} closes every connection at once;
 * {@link #awaitTermination} waits for the last connection and the event loops. {@link #close()} is
 * a shutdown that waits for the drain timeout and then forces what is left.
 */
public final class MillraceServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(MillraceServer.class.getName());

  private final List<Channel> serverChannels;
  private final List<Runnable> inJvmUnbinds;
  private final List<TransportUri> listeners;
  private final ConnectionGroup connections;
  private final ConnectionConfig config;

  private MillraceServer(
      List<Channel> serverChannels,
      List<Runnable> inJvmUnbinds,
      List<TransportUri> listeners,
      ConnectionGroup connections,
      ConnectionConfig config) {
    this.serverChannels = serverChannels;
    this.inJvmUnbinds = inJvmUnbinds;
    this.listeners = listeners;
    this.connections = connections;
    this.config = config;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Where the server listens, in the order given, with the actual ports of those bound to 0. */
  public List<TransportUri> listeners() {
    return listeners;
  }

  /** The first listener of {@code scheme}; throws when there is none. */
  public TransportUri listener(TransportUri.Scheme scheme) {
    for (TransportUri uri : listeners) {
      if (uri.scheme() == scheme) {
        return uri;
      }
    }
    throw new IllegalStateException("the server has no " + scheme + " listener");
  }

  /** The address of the first IP listener (with the actual port when bound to port 0). */
  public InetSocketAddress address() {
    for (Channel channel : serverChannels) {
      if (channel.localAddress() instanceof InetSocketAddress) {
        return (InetSocketAddress) channel.localAddress();
      }
    }
    throw new IllegalStateException("the server has no IP listener");
  }

  /** The port of the first IP listener. */
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
    closeListeners();
    connections.shutdown();
  }

  /** Stops accepting and closes every connection at once; returns at once. */
  public void shutdownNow() {
    closeListeners();
    connections.shutdownNow();
  }

  private void closeListeners() {
    for (Channel channel : serverChannels) {
      channel.close();
    }
    for (Runnable unbind : inJvmUnbinds) {
      unbind.run();
    }
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

  /** Configures and binds a {@link MillraceServer}. */
  public static final class Builder {
    private final List<TransportUri> listeners = new ArrayList<>();
    private TransportUri shorthand;
    private ConnectionConfig config = ConnectionConfig.DEFAULT;
    private Acceptor acceptor;
    private AsyncAcceptor asyncAcceptor;
    private int maxConnections = 65_536;
    private long maxReassemblyBytes = 256L << 20;
    private long maxResumeBytes = 256L << 20;
    private final SocketSettings socket = new SocketSettings();
    private ServerTls tls;
    private WebSocketOptions webSocket = WebSocketOptions.DEFAULT;
    private Http2Handoff http2;

    private Builder() {}

    /**
     * Listens on {@code uri}: {@code tcp://H:P}, {@code tls://H:P}, {@code ws://H:P/PATH}, {@code
     * wss://H:P/PATH}, {@code unix:///path} or {@code local://NAME}. Repeatable; port 0 picks a
     * free port ({@link MillraceServer#listeners()} tells which).
     */
    public Builder listen(String uri) {
      return listen(TransportUri.parse(uri));
    }

    public Builder listen(TransportUri uri) {
      listeners.add(Objects.requireNonNull(uri));
      return this;
    }

    /**
     * Shorthand for one {@code tcp://host:port} listener; a second call replaces the first. With no
     * listener at all the server listens on {@code tcp://127.0.0.1:0}.
     */
    public Builder bindAddress(String host, int port) {
      if (shorthand != null) {
        listeners.remove(shorthand);
      }
      shorthand = TransportUri.tcp(host, port);
      listeners.add(shorthand);
      return this;
    }

    /** Certificates for the {@code tls} and {@code wss} listeners (required by them). */
    public Builder tls(ServerTls tls) {
      this.tls = Objects.requireNonNull(tls);
      return this;
    }

    /** Subprotocol and origin checks for WebSocket connections, on any listener. */
    public Builder webSocket(WebSocketOptions options) {
      this.webSocket = Objects.requireNonNull(options);
      return this;
    }

    /**
     * Serves HTTP/2 connections arriving on {@code tcp}, {@code tls} and {@code unix} listeners
     * with {@code handoff} (the gRPC endpoint's), and offers h2 in ALPN under TLS. Without one such
     * connections are closed.
     */
    public Builder http2Handoff(Http2Handoff handoff) {
      this.http2 = Objects.requireNonNull(handoff);
      return this;
    }

    /** Socket I/O for TCP and Unix socket listeners. Default {@link IoKind#preferred()}. */
    public Builder ioKind(IoKind kind) {
      socket.ioKind(kind);
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
     * Connections served at once, on all listeners together; one beyond it is closed before
     * anything of it is read, after an ERROR[REJECTED_SETUP] where frames can be said at once (tcp,
     * unix, local). Default 65,536.
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

    /**
     * SO_SNDBUF and SO_RCVBUF of each Unix socket connection, in bytes; 0 keeps the kernel's
     * default. Default 1 MiB (the kernel caps it at {@code net.core.wmem_max}), so that a busy
     * connection's frames in flight fit: with Linux's default of about 200 KiB, Unix sockets fell
     * behind loopback TCP. The kernel takes the memory only as data waits in the socket.
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

    /** Binds every listener and returns the running server; throws when one cannot be bound. */
    public MillraceServer bind() throws InterruptedException {
      if (acceptor == null && asyncAcceptor == null) {
        throw new IllegalStateException("an acceptor is required");
      }
      List<TransportUri> wanted =
          listeners.isEmpty() ? List.of(TransportUri.tcp("127.0.0.1", 0)) : List.copyOf(listeners);
      String webSocketPath = TransportUri.DEFAULT_WEBSOCKET_PATH;
      boolean webSocketPathSeen = false;
      for (TransportUri uri : wanted) {
        if (uri.scheme().secure() && tls == null) {
          throw new IllegalStateException("listening on " + uri + " needs tls(...)");
        }
        if (uri.scheme().webSocket() && !webSocketPathSeen) {
          webSocketPath = uri.path();
          webSocketPathSeen = true;
        }
      }
      IoKind kind = socket.ioKind().requireAvailable();
      // In-JVM connections live on the worker loops too; the accept loop starts its thread only
      // if a socket listener needs it.
      EventLoopGroup boss = EventLoops.newGroup(kind, 1, "millrace-accept");
      EventLoopGroup workers =
          EventLoops.newGroup(kind, socket.eventLoopThreads, "millrace-server");
      List<EventLoopGroup> groups = List.of(workers, boss);
      ConnectionGroup connections = new ConnectionGroup(groups.toArray(new EventLoopGroup[0]));
      ResumeSessions sessions =
          config.resumption() == null
              ? null
              : new ResumeSessions(config.resumption(), maxResumeBytes);
      ServerPipelines pipelines =
          new ServerPipelines(
              config,
              acceptor,
              asyncAcceptor,
              ReassemblyBudget.forServer(maxReassemblyBytes),
              sessions,
              connections,
              maxConnections,
              tls,
              webSocket,
              webSocketPath,
              http2);
      try {
        pipelines.prepareTls();
      } catch (IOException e) {
        for (EventLoopGroup group : groups) {
          group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
        throw new IllegalStateException(e.getMessage(), e);
      }
      List<Channel> channels = new ArrayList<>();
      List<Runnable> unbinds = new ArrayList<>();
      List<TransportUri> bound = new ArrayList<>();
      try {
        for (TransportUri uri : wanted) {
          if (uri.scheme() == TransportUri.Scheme.LOCAL) {
            unbinds.add(bindInJvm(uri.host(), workers, pipelines));
            bound.add(uri);
            LOG.log(Level.DEBUG, "listening on {0} (in-JVM)", uri);
            continue;
          }
          Channel channel =
              bootstrap(uri, kind, boss, workers, pipelines)
                  .bind(bindAddress(uri, kind))
                  .sync()
                  .channel();
          channels.add(channel);
          TransportUri actual =
              channel.localAddress() instanceof InetSocketAddress
                  ? uri.withPort(((InetSocketAddress) channel.localAddress()).getPort())
                  : uri;
          bound.add(actual);
          if (uri.scheme() == TransportUri.Scheme.UNIX) {
            Path file = Path.of(uri.path());
            channel.closeFuture().addListener(f -> deleteQuietly(file));
          }
          LOG.log(Level.DEBUG, "listening on {0} ({1})", actual, kind);
        }
      } catch (Throwable e) {
        // Netty's sync() rethrows a bind's IOException unchecked: every failure lands here.
        for (Channel channel : channels) {
          channel.close();
        }
        for (Runnable unbind : unbinds) {
          unbind.run();
        }
        for (EventLoopGroup group : groups) {
          group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
        if (e instanceof InterruptedException) {
          throw (InterruptedException) e;
        }
        if (e instanceof RuntimeException) {
          throw (RuntimeException) e;
        }
        if (e instanceof Error) {
          throw (Error) e;
        }
        throw new IllegalStateException(
            "cannot listen on " + wanted.get(bound.size()) + ": " + e.getMessage(), e);
      }
      ScheduledExecutorService reloader = scheduleTlsReload();
      if (reloader != null) {
        connections.onTerminated(reloader::shutdownNow);
      }
      return new MillraceServer(
          List.copyOf(channels), List.copyOf(unbinds), List.copyOf(bound), connections, config);
    }

    private ServerBootstrap bootstrap(
        TransportUri uri,
        IoKind kind,
        EventLoopGroup boss,
        EventLoopGroup workers,
        ServerPipelines pipelines) {
      TransportUri.Scheme scheme = uri.scheme();
      ServerBootstrap bootstrap =
          new ServerBootstrap()
              .group(boss, workers)
              .childOption(ChannelOption.ALLOCATOR, socket.allocator)
              .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, socket.waterMark)
              .childHandler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                      pipelines.init(channel, uri);
                    }
                  });
      boolean unix = scheme == TransportUri.Scheme.UNIX;
      bootstrap.channel(kind.serverChannel(unix));
      if (kind.halfClosure(unix)) {
        bootstrap.childOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
      }
      if (scheme.ip()) {
        bootstrap
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true);
      } else if (socket.unixSocketBuffer > 0) {
        bootstrap
            .childOption(ChannelOption.SO_SNDBUF, socket.unixSocketBuffer)
            .childOption(ChannelOption.SO_RCVBUF, socket.unixSocketBuffer);
      }
      return bootstrap;
    }

    /** Binds {@code local://name}; returns what unbinds it. */
    private Runnable bindInJvm(String name, EventLoopGroup workers, ServerPipelines pipelines) {
      ByteBufAllocator alloc = socket.allocator;
      int maxFrameLength = config.maxFrameLength();
      io.netty.channel.WriteBufferWaterMark waterMark = socket.waterMark;
      InJvmServers.Listener listener =
          new InJvmServers.Listener() {
            @Override
            public io.netty.util.concurrent.EventExecutor nextLoop() {
              return workers.next();
            }

            @Override
            public ByteBufAllocator alloc() {
              return alloc;
            }

            @Override
            public int maxFrameLength() {
              return maxFrameLength;
            }

            @Override
            public io.netty.channel.WriteBufferWaterMark waterMark() {
              return waterMark;
            }

            @Override
            public void accept(InJvmTransport transport) {
              pipelines.serveInJvm(transport);
            }
          };
      InJvmServers.bind(name, listener);
      return () -> InJvmServers.unbind(name, listener);
    }

    private static SocketAddress bindAddress(TransportUri uri, IoKind kind) {
      SocketAddress address = uri.socketAddress(kind);
      if (address instanceof InetSocketAddress) {
        InetSocketAddress inet = (InetSocketAddress) address;
        return new InetSocketAddress(inet.getHostString(), inet.getPort());
      }
      return address;
    }

    private static void deleteQuietly(Path file) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "could not delete the socket file " + file, e);
      }
    }

    /**
     * Checks the certificate files for changes, if the TLS asks for it, on a thread of its own: it
     * reads files, which an event loop must not.
     */
    private ScheduledExecutorService scheduleTlsReload() {
      if (tls == null || tls.reloadInterval() == null) {
        return null;
      }
      ServerTls tls = this.tls;
      ScheduledExecutorService reloader =
          Executors.newSingleThreadScheduledExecutor(
              task -> {
                // A plain thread: Netty's factory makes threads that count as event loops.
                Thread thread = new Thread(task, "millrace-tls-reload");
                thread.setDaemon(true);
                return thread;
              });
      long every = tls.reloadInterval().toMillis();
      reloader.scheduleWithFixedDelay(
          () -> {
            try {
              if (tls.reloadIfChanged()) {
                LOG.log(Level.INFO, "TLS certificate reloaded");
              }
            } catch (IOException | RuntimeException e) {
              LOG.log(
                  Level.WARNING,
                  "TLS certificate not reloaded, the previous one stays: {0}",
                  e.getMessage());
            }
          },
          every,
          every,
          TimeUnit.MILLISECONDS);
      return reloader;
    }
  }
}
