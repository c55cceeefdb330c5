package io.millrace.grpc;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.millrace.rpc.RpcServer;
import io.millrace.transport.netty.EventLoops;
import io.millrace.transport.netty.Http2Handoff;
import io.millrace.transport.netty.MillraceServer;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Serves an {@link RpcServer}'s services to gRPC clients, over HTTP/2 (h2c, or TLS through {@link
 * Builder#configure}), with grpc-java's Netty server: the same service implementations and
 * interceptors that serve Millrace clients, reached by any gRPC client and by the tools built on
 * them (grpcurl and ghz through server reflection, load balancers and Kubernetes through the health
 * service).
 *
 * <pre>{@code
 * GrpcEndpoint grpc = GrpcEndpoint.builder(rpc).port(50051).start();
 * ...
 * grpc.close();
 * }</pre>
 *
 * <p>What gRPC clients get is grpc-java's server behaviour: its answers to an unknown service or
 * method, a wrong content type, an oversized message (4 MiB by default), its deadline handling
 * (grpc-timeout), gzip, and its keepalive-abuse policy. On top of its defaults this endpoint bounds
 * concurrent calls per connection ({@value #DEFAULT_MAX_CONCURRENT_CALLS}, as a Millrace connection
 * bounds streams) and RST_STREAM floods (rapid reset: more than {@value #DEFAULT_MAX_RST_FRAMES}
 * resets in {@value #DEFAULT_RST_WINDOW_SECONDS} seconds closes the connection), which grpc-java
 * leaves unbounded unless configured.
 */
public final class GrpcEndpoint implements AutoCloseable {
  public static final int DEFAULT_MAX_CONCURRENT_CALLS = 4096;
  public static final int DEFAULT_MAX_RST_FRAMES = 2000;
  public static final int DEFAULT_RST_WINDOW_SECONDS = 10;

  private final Server server;
  private final HealthStatusManager health;
  private final EventLoopGroup ownedLoops;
  private final SharedPortHandoff handoff;

  private GrpcEndpoint(
      Server server,
      HealthStatusManager health,
      EventLoopGroup ownedLoops,
      SharedPortHandoff handoff) {
    this.server = server;
    this.health = health;
    this.ownedLoops = ownedLoops;
    this.handoff = handoff;
  }

  /**
   * What a {@link MillraceServer} takes ({@link MillraceServer.Builder#http2Handoff}) to serve this
   * endpoint's gRPC on its own ports: an endpoint built with {@link Builder#sharedPorts()} only.
   */
  public Http2Handoff handoff() {
    if (handoff == null) {
      throw new IllegalStateException("this endpoint has a port of its own (see sharedPorts())");
    }
    return handoff;
  }

  public static Builder builder(RpcServer rpc) {
    return new Builder(rpc);
  }

  /** The port the endpoint listens on (the one chosen when 0 was asked); -1 with shared ports. */
  public int port() {
    return server.getPort();
  }

  /** The address the endpoint listens on. */
  public SocketAddress address() {
    List<? extends SocketAddress> addresses = server.getListenSockets();
    return addresses.isEmpty() ? null : addresses.get(0);
  }

  /**
   * The health service's statuses (null when the health service is off): every service, and the
   * server as a whole ({@code ""}), start SERVING; set NOT_SERVING to take one out of a balancer.
   */
  public HealthStatusManager health() {
    return health;
  }

  /**
   * Stops taking calls (the health service says NOT_SERVING first), lets running calls finish for
   * up to {@code grace}, then cancels what remains. On shared ports, the same grace lets the
   * splices pass on what they still hold for callers that read slowly before the endpoint's loops
   * stop.
   */
  public void close(java.time.Duration grace) {
    if (handoff != null) {
      handoff.close();
    }
    if (health != null) {
      health.enterTerminalState();
    }
    long deadline = System.nanoTime() + grace.toNanos();
    server.shutdown();
    try {
      if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
      if (handoff != null) {
        handoff.awaitSplices(deadline); // what the splices still carry for slow callers
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      if (ownedLoops != null) {
        ownedLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
      }
      if (handoff != null) {
        handoff.deleteFiles();
      }
    }
  }

  /** {@link #close(java.time.Duration)} with five seconds' grace. */
  @Override
  public void close() {
    close(java.time.Duration.ofSeconds(5));
  }

  /** Builds and starts a {@link GrpcEndpoint}. */
  public static final class Builder {
    private final RpcServer rpc;
    private SocketAddress address = new InetSocketAddress(0);
    private Executor executor;
    private boolean health = true;
    private boolean reflection = true;
    private EventLoopGroup loops;
    private Consumer<NettyServerBuilder> configure = b -> {};
    private boolean shared;

    private Builder(RpcServer rpc) {
      this.rpc = Objects.requireNonNull(rpc, "rpc");
    }

    /**
     * No port of its own: gRPC arrives on the ports of a {@link MillraceServer} that is given
     * {@link GrpcEndpoint#handoff()}, next to RSocket and WebSocket, HTTP/2 told apart by its
     * preface (and by ALPN h2 under TLS, which the Millrace port then terminates). Each connection
     * is spliced to grpc-java over a private Unix domain socket (in a directory only this user can
     * enter), so backpressure holds both ways; a port of its own saves that hop and is the faster
     * choice where a second port is no trouble.
     */
    public Builder sharedPorts() {
      this.shared = true;
      return this;
    }

    /** Listens on {@code port} of every interface (0, the default: a free port). */
    public Builder port(int port) {
      return address(new InetSocketAddress(port));
    }

    public Builder address(SocketAddress address) {
      this.address = Objects.requireNonNull(address, "address");
      return this;
    }

    /**
     * Where handlers run. By default the RpcServer's handler executor when it has one (blocking
     * handlers, virtual threads), else the connection's event loop, as for Millrace clients.
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** Serves {@code grpc.health.v1.Health} (on by default). */
    public Builder health(boolean on) {
      this.health = on;
      return this;
    }

    /** Serves server reflection, v1 and v1alpha (on by default). */
    public Builder reflection(boolean on) {
      this.reflection = on;
      return this;
    }

    /**
     * The event loops to run on (the caller shuts them down); by default the endpoint's own. Not
     * used with {@link #sharedPorts()}, whose loops must be of the kind its Unix socket takes.
     */
    public Builder eventLoops(EventLoopGroup loops) {
      this.loops = Objects.requireNonNull(loops, "loops");
      return this;
    }

    /**
     * Changes grpc-java's server builder before it is built: TLS, keepalive, message and header
     * limits, more services. Runs after this builder's settings, so it can override them.
     */
    public Builder configure(Consumer<NettyServerBuilder> configure) {
      this.configure = Objects.requireNonNull(configure, "configure");
      return this;
    }

    /** Starts listening. */
    public GrpcEndpoint start() {
      EventLoopGroup group =
          loops != null && !shared ? loops : EventLoops.newGroup(0, "millrace-grpc");
      EventLoopGroup owned = group == loops ? null : group;
      try {
        return start(group, owned);
      } catch (Throwable e) {
        if (owned != null) {
          owned.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
        throw e;
      }
    }

    private GrpcEndpoint start(EventLoopGroup group, EventLoopGroup owned) {
      SharedPortHandoff handoff = shared ? SharedPortHandoff.create(group) : null;
      try {
        return start(group, owned, handoff);
      } catch (Throwable e) {
        if (handoff != null) {
          handoff.deleteFiles(); // the private directory goes with a start that failed
        }
        throw e;
      }
    }

    @SuppressWarnings("deprecation") // v1alpha reflection: older grpcurl and ghz still ask it
    private GrpcEndpoint start(
        EventLoopGroup group, EventLoopGroup owned, SharedPortHandoff handoff) {
      SocketAddress listen = handoff != null ? handoff.target() : address;
      NettyServerBuilder b =
          NettyServerBuilder.forAddress(listen)
              .channelType(
                  shared ? EventLoops.domainServerChannel() : EventLoops.serverChannel(group))
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .maxConcurrentCallsPerConnection(DEFAULT_MAX_CONCURRENT_CALLS)
              .maxRstFramesPerWindow(DEFAULT_MAX_RST_FRAMES, DEFAULT_RST_WINDOW_SECONDS);
      Executor handlers = executor != null ? executor : rpc.handlerExecutor();
      if (handlers != null) {
        b.executor(handlers);
      } else {
        b.directExecutor();
      }
      List<ServerServiceDefinition> services = GrpcServices.of(rpc, group);
      services.forEach(b::addService);
      HealthStatusManager healthManager = null;
      if (health) {
        healthManager = new HealthStatusManager();
        b.addService(healthManager.getHealthService());
        for (ServerServiceDefinition s : services) {
          healthManager.setStatus(s.getServiceDescriptor().getName(), ServingStatus.SERVING);
        }
      }
      if (reflection) {
        b.addService(ProtoReflectionServiceV1.newInstance());
        b.addService(io.grpc.protobuf.services.ProtoReflectionService.newInstance());
      }
      if (handoff != null) {
        b.addTransportFilter(handoff.callerAttributes());
        // grpc-java asks TCP keepalive of every connection; a Unix socket has none (Netty would
        // warn once per connection). The caller's own connection is the one that can go stale.
        b.withChildOption(io.netty.channel.ChannelOption.SO_KEEPALIVE, null);
      }
      configure.accept(b);
      Server server = b.build();
      try {
        server.start();
      } catch (IOException e) {
        throw new UncheckedIOException("the gRPC endpoint could not listen on " + listen, e);
      }
      return new GrpcEndpoint(server, healthManager, owned, handoff);
    }
  }
}
