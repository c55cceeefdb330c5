package io.millrace.rpc;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionSetup;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import io.millrace.streams.internal.Payloads;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;

/**
 * Serves services' methods to the connections whose SETUP says they speak RPC: native callers
 * (metadata MIME type {@value #METADATA_MIME_TYPE}, the call header) and routing callers such as
 * rsocket-java and Spring ({@code message/x.rsocket.composite-metadata.v0} with a routing entry, or
 * {@code message/x.rsocket.routing.v0}).
 *
 * <p>Dispatch: a native call's 8-byte method id finds its method in a primitive map, with no string
 * built or hashed per call; a routing call's first tag ({@code package.Service.Method}) in a hash
 * map. Two registered methods whose ids collide are refused when the server is built.
 *
 * <pre>{@code
 * RpcServer rpc = RpcServer.builder().service(echoService).build();
 * MillraceServer.builder().acceptor(rpc::responder)...
 * }</pre>
 */
public final class RpcServer {
  /** The SETUP metadata MIME type of native RPC connections. */
  public static final String METADATA_MIME_TYPE = CallHeader.MIME_TYPE;

  /**
   * The metadata MIME type of callers that route with composite metadata (rsocket-java's and
   * Spring's clients, and {@link RpcClient#routing}).
   */
  public static final String ROUTED_METADATA_MIME_TYPE = Routing.COMPOSITE_MIME_TYPE;

  /** Request headers larger than this (keys and values) fail with RESOURCE_EXHAUSTED. */
  public static final int DEFAULT_MAX_HEADER_BYTES = 8 * 1024;

  private final LongObjectHashMap<ServerMethod<?, ?>> byId;
  private final Map<String, ServerMethod<?, ?>> byRoute;
  private final int maxHeaderBytes;
  private final StreamsOptions options;
  private final List<ServerInterceptor> interceptors;
  private final List<ServiceDefinition> services;

  private RpcServer(Builder b) {
    this.interceptors = List.copyOf(b.interceptors);
    this.services = List.copyOf(b.services);
    this.byId = new LongObjectHashMap<>(b.byId.size());
    this.byId.putAll(b.byId);
    this.byRoute = Map.copyOf(b.byRoute);
    this.maxHeaderBytes = b.maxHeaderBytes;
    this.options = zeroCopy(b.options);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@code options} with zero-copy receiving: requests are parsed as they arrive and their buffers
   * released at once (a channel's requests wait, at most the prefetch, as views of what was
   * received).
   */
  static StreamsOptions zeroCopy(StreamsOptions options) {
    if (options.zeroCopy()) {
      return options;
    }
    return options.toBuilder().zeroCopy(true).build();
  }

  StreamsOptions options() {
    return options;
  }

  /** The executor handlers run on (null: the connection's event loop). */
  public java.util.concurrent.Executor handlerExecutor() {
    return options.handlerExecutor();
  }

  /** Whether connections declaring {@code metadataMimeType} are served by RPC. */
  public static boolean speaksRpc(String metadataMimeType) {
    return mode(metadataMimeType) != null;
  }

  /**
   * The responder for a connection, or null when its SETUP does not declare an RPC metadata type
   * (so that a server can serve other requests next to RPC); an {@link io.millrace.core.Acceptor}
   * that only serves RPC rejects such connections by returning null.
   */
  public Responder responder(ConnectionSetup setup, Connection connection) {
    ServerHandler.Mode mode = mode(setup.metadataMimeType());
    return mode == null
        ? null
        : ReactiveResponder.of(new ServerHandler(this, mode, connection), options);
  }

  /**
   * The responder for a connection that serves RPC next to {@code fallback}: a native RPC
   * connection is all RPC; on a routing connection, a call whose route names a served method is RPC
   * and any other call goes to {@code fallback}, as does every call of a connection of another
   * metadata type.
   */
  public Responder responder(ConnectionSetup setup, Connection connection, Responder fallback) {
    Objects.requireNonNull(fallback, "fallback");
    ServerHandler.Mode mode = mode(setup.metadataMimeType());
    if (mode == null) {
      return fallback;
    }
    Responder rpc = ReactiveResponder.of(new ServerHandler(this, mode, connection), options);
    return mode == ServerHandler.Mode.NATIVE
        ? rpc
        : new RoutedOrFallback(rpc, fallback, mode == ServerHandler.Mode.COMPOSITE);
  }

  /** Sends a routing connection's calls to RPC when their route names a served method. */
  private final class RoutedOrFallback implements Responder {
    private final Responder rpc;
    private final Responder fallback;
    private final boolean composite;

    RoutedOrFallback(Responder rpc, Responder fallback, boolean composite) {
      this.rpc = rpc;
      this.fallback = fallback;
      this.composite = composite;
    }

    private Responder pick(ByteBuf metadata) {
      String route;
      try {
        route = composite ? Routing.firstRouteInComposite(metadata) : Routing.firstRoute(metadata);
      } catch (StatusException malformed) {
        return fallback; // not routing metadata RPC can read: the other responder's call
      }
      return route != null && byRoute.containsKey(route) ? rpc : fallback;
    }

    @Override
    public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
      pick(metadata).fireAndForget(connection, metadata, data);
    }

    @Override
    public void metadataPush(Connection connection, ByteBuf metadata) {
      fallback.metadataPush(connection, metadata);
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      return pick(metadata).requestResponse(stream, metadata, data);
    }

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      return pick(metadata).requestStream(stream, metadata, data);
    }

    @Override
    public StreamListener requestChannel(
        Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
      return pick(metadata).requestChannel(stream, metadata, data, inboundComplete);
    }
  }

  private static ServerHandler.Mode mode(String metadataMimeType) {
    if (METADATA_MIME_TYPE.equals(metadataMimeType)) {
      return ServerHandler.Mode.NATIVE;
    }
    if (Routing.COMPOSITE_MIME_TYPE.equals(metadataMimeType)) {
      return ServerHandler.Mode.COMPOSITE;
    }
    if (Routing.ROUTING_MIME_TYPE.equals(metadataMimeType)) {
      return ServerHandler.Mode.ROUTING;
    }
    return null;
  }

  ServerMethod<?, ?> method(long id) {
    return byId.get(id);
  }

  ServerMethod<?, ?> method(String route) {
    return byRoute.get(route);
  }

  int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  List<ServerInterceptor> interceptors() {
    return interceptors;
  }

  /** The services served, in the order they were added. */
  public List<ServiceDefinition> services() {
    return services;
  }

  /**
   * Runs the interceptors' {@code onCall} and then {@code handler}, and wraps the responses in the
   * interceptors' {@code onResponses}: the Publisher the caller is answered with. Never throws: an
   * interceptor's refusal, a handler that throws or returns null become a failing Publisher, which
   * the interceptors that accepted the call see.
   */
  <Resp> Publisher<Resp> intercepted(ServerContext context, Supplier<Publisher<Resp>> handler) {
    if (!interceptors.isEmpty()) {
      context.markIntercepted(); // answers are then subscribed when an interceptor subscribes
    }
    Publisher<Resp> responses;
    int entered = 0; // interceptors whose onCall accepted the call: they see how it ends
    try {
      for (; entered < interceptors.size(); entered++) {
        interceptors.get(entered).onCall(context);
      }
      responses = handler.get();
      if (responses == null) {
        responses =
            Publishers.failed(
                Status.INTERNAL.withMessage("the handler returned null").asException());
      }
    } catch (Throwable e) { // an Error too: this call fails, not the connection
      responses = Publishers.failed(asStatusException(e));
    }
    for (int i = entered - 1; i >= 0; i--) {
      try {
        responses =
            Objects.requireNonNull(
                interceptors.get(i).onResponses(context, responses),
                "an interceptor's onResponses returned null");
      } catch (Throwable e) {
        // The interceptors inside this one see their responses cancelled, those outside it the
        // call end as a failure.
        Payloads.cancelUnread(responses);
        responses = Publishers.failed(asStatusException(e));
      }
    }
    return responses;
  }

  /** A failure as a StatusException: itself when it is one (its trailers kept), else its status. */
  private static StatusException asStatusException(Throwable e) {
    return e instanceof StatusException se ? se : Status.fromThrowable(e).asException();
  }

  /** Builds an {@link RpcServer}. */
  public static final class Builder {
    private final LongObjectHashMap<ServerMethod<?, ?>> byId = new LongObjectHashMap<>();
    private final Map<String, ServerMethod<?, ?>> byRoute = new HashMap<>();
    private int maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES;
    private StreamsOptions options = StreamsOptions.DEFAULT;
    private final List<ServerInterceptor> interceptors = new ArrayList<>();
    private final List<ServiceDefinition> services = new ArrayList<>();

    /** Adds an interceptor around every call; the first added runs outermost. */
    public Builder interceptor(ServerInterceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /** Adds a service's methods; a method already served, or whose id collides, is refused. */
    public Builder service(ServiceDefinition service) {
      for (ServerMethod<?, ?> m : service.serverMethods()) {
        MethodDescriptor<?, ?> d = m.descriptor();
        ServerMethod<?, ?> same = byId.get(d.id());
        if (same != null) {
          throw new IllegalArgumentException(
              same.descriptor().fullName().equals(d.fullName())
                  ? d.fullName() + " is registered twice"
                  : d.fullName() + " and " + same.descriptor().fullName() + " have the same id");
        }
        ServerMethod<?, ?> sameRoute = byRoute.get(d.route());
        if (sameRoute != null) {
          throw new IllegalArgumentException(
              d.fullName()
                  + " and "
                  + sameRoute.descriptor().fullName()
                  + " have the same route "
                  + d.route());
        }
        byId.put(d.id(), m);
        if (d.route().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 255) {
          byRoute.put(d.route(), m); // longer routes cannot be a routing tag: native calls only
        }
      }
      services.add(service);
      return this;
    }

    /** The request header limit (keys and values), 8 KiB by default as in gRPC. */
    public Builder maxHeaderBytes(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("negative limit");
      }
      this.maxHeaderBytes = bytes;
      return this;
    }

    /**
     * How handlers run (an executor for blocking handlers, virtual threads included) and prefetch.
     */
    public Builder streamsOptions(StreamsOptions options) {
      this.options = Objects.requireNonNull(options, "options");
      return this;
    }

    public RpcServer build() {
      return new RpcServer(this);
    }
  }
}
