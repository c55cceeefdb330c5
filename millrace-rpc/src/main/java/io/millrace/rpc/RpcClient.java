package io.millrace.rpc;

import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/**
 * Calls RPC methods over one connection, as Reactive Streams Publishers that the flavours' stubs
 * adapt: each subscription is one call, a response is one item, the call's end is the completion or
 * a {@link StatusException}. Cancelling the subscription cancels the call on the server.
 *
 * <p>The connection's SETUP must declare the encoding: {@link RpcServer#METADATA_MIME_TYPE} for
 * {@link #of} (the call header: headers, deadlines, statuses with details and trailers), or
 * composite metadata for {@link #routing} (a routing entry, as rsocket-java and Spring send it; no
 * headers or deadline on the wire, failures as "CODE: message").
 */
public final class RpcClient {
  private final ReactiveRequester requester;
  private final boolean routing;
  private final int maxHeaderBytes;
  private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;

  private final List<ClientInterceptor> interceptors;

  private RpcClient(
      ReactiveRequester requester,
      boolean routing,
      int maxHeaderBytes,
      List<ClientInterceptor> interceptors) {
    this.requester = zeroCopy(Objects.requireNonNull(requester, "requester"));
    this.routing = routing;
    this.maxHeaderBytes = maxHeaderBytes;
    this.interceptors = interceptors;
  }

  /**
   * The requester with zero-copy receiving: every response is parsed when it arrives and its buffer
   * released at once, so a heap copy first would only cost (RPC's messages are the copy).
   */
  static ReactiveRequester zeroCopy(ReactiveRequester requester) {
    StreamsOptions o = requester.options();
    return o.zeroCopy()
        ? requester
        : ReactiveRequester.of(requester.connection(), RpcServer.zeroCopy(o));
  }

  /** The event loop of the client's connection (where its calls' signals come from). */
  public io.netty.util.concurrent.EventExecutor loop() {
    return requester.connection().executor();
  }

  /**
   * The connection the client's calls go over: its readiness ({@link Connection#isReadyForCalls()})
   * tells whether a call made now would be taken at once.
   */
  public Connection connection() {
    return requester.connection();
  }

  /** How many responses of a stream the client lets wait. */
  int prefetch() {
    return requester.options().prefetch();
  }

  /** This client with {@code more} interceptors after its own (the first given runs outermost). */
  public RpcClient withInterceptors(ClientInterceptor... more) {
    List<ClientInterceptor> all = new ArrayList<>(interceptors);
    for (ClientInterceptor i : more) {
      all.add(Objects.requireNonNull(i, "interceptor"));
    }
    return new RpcClient(requester, routing, maxHeaderBytes, List.copyOf(all));
  }

  /**
   * Runs the interceptors around a call made by {@code call} with the options they return, once per
   * subscription (each is a call of its own: a retry asks them again).
   */
  private <T> Publisher<T> intercepted(
      MethodDescriptor<?, ?> method,
      CallOptions options,
      Function<CallOptions, Publisher<T>> call) {
    Objects.requireNonNull(options, "options");
    if (interceptors.isEmpty()) {
      return call.apply(options);
    }
    return subscriber -> {
      CallOptions o = options;
      Publisher<T> responses;
      try {
        for (ClientInterceptor i : interceptors) {
          o = Objects.requireNonNull(i.onCall(method, o), "an interceptor returned null options");
        }
        responses = call.apply(o);
        for (int i = interceptors.size() - 1; i >= 0; i--) {
          responses =
              Objects.requireNonNull(
                  interceptors.get(i).onResponses(method, o, responses),
                  "an interceptor's onResponses returned null");
        }
      } catch (RuntimeException e) {
        StatusException refused =
            e instanceof StatusException se ? se : Status.fromThrowable(e).asException();
        Publishers.<T>failed(refused).subscribe(subscriber);
        return;
      }
      responses.subscribe(subscriber);
    };
  }

  /** Native calls (the connection's metadata MIME type is {@link RpcServer#METADATA_MIME_TYPE}). */
  public static RpcClient of(ReactiveRequester requester) {
    return new RpcClient(requester, false, RpcServer.DEFAULT_MAX_HEADER_BYTES, List.of());
  }

  /** Calls routed with composite metadata, as rsocket-java and Spring clients make them. */
  public static RpcClient routing(ReactiveRequester requester) {
    return new RpcClient(requester, true, RpcServer.DEFAULT_MAX_HEADER_BYTES, List.of());
  }

  /** One request, one response. */
  public <Req, Resp> Publisher<Resp> unary(
      MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    expect(method, MethodDescriptor.Type.UNARY);
    if (method.fireAndForget()) {
      throw new IllegalArgumentException(method + " is fire-and-forget: use fireAndForget");
    }
    if (interceptors.isEmpty()) {
      return single(method, request, Objects.requireNonNull(options, "options"), true);
    }
    return intercepted(method, options, o -> single(method, request, o, true));
  }

  /** One request, a stream of responses. */
  public <Req, Resp> Publisher<Resp> serverStreaming(
      MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    expect(method, MethodDescriptor.Type.SERVER_STREAMING);
    if (interceptors.isEmpty()) {
      return single(method, request, Objects.requireNonNull(options, "options"), false);
    }
    return intercepted(method, options, o -> single(method, request, o, false));
  }

  /** A call that sends one request: request-response ({@code unary}) or request-stream. */
  private <Req, Resp> Publisher<Resp> single(
      MethodDescriptor<Req, Resp> method, Req request, CallOptions options, boolean unary) {
    if (unary) {
      return new UnaryCall<>(this, method, request, options);
    }
    SingleRequest<Req> call = new SingleRequest<>(method, request, options, unary);
    return new ResponseReader<>(
        call,
        method.responseMarshaller(),
        options,
        unary,
        routing,
        maxHeaderBytes,
        requester.connection().executor(),
        NOTHING);
  }

  private static final Runnable NOTHING = () -> {};

  /**
   * Starts a one-request call, with its payload made then: one object per call. The reader calls
   * {@link #get} once per subscription, so each subscription is a new call without a deferring
   * Publisher in between; a payload that cannot be made fails that subscription.
   */
  private final class SingleRequest<Req>
      implements java.util.function.Supplier<Publisher<Payload>> {
    private final MethodDescriptor<Req, ?> method;
    private final Req request;
    private final CallOptions options;
    private final boolean unary;

    SingleRequest(
        MethodDescriptor<Req, ?> method, Req request, CallOptions options, boolean unary) {
      this.method = method;
      this.request = request;
      this.options = options;
      this.unary = unary;
    }

    @Override
    public Publisher<Payload> get() {
      Payload p = payload(method, request, options, timeoutMicros(options));
      return unary ? requester.requestResponse(p) : requester.requestStream(p);
    }
  }

  /** A stream of requests (subscribed when the call starts), one response. */
  public <Req, Resp> Publisher<Resp> clientStreaming(
      MethodDescriptor<Req, Resp> method, Publisher<Req> requests, CallOptions options) {
    expect(method, MethodDescriptor.Type.CLIENT_STREAMING);
    return intercepted(method, options, o -> channel(method, requests, o, true));
  }

  /** Streams both ways. */
  public <Req, Resp> Publisher<Resp> bidiStreaming(
      MethodDescriptor<Req, Resp> method, Publisher<Req> requests, CallOptions options) {
    expect(method, MethodDescriptor.Type.BIDI_STREAMING);
    return intercepted(method, options, o -> channel(method, requests, o, false));
  }

  /**
   * Sends a fire-and-forget method's request: completes once handed to the connection; the server's
   * outcome is not reported.
   */
  public <Req> Publisher<Void> fireAndForget(
      MethodDescriptor<Req, ?> method, Req request, CallOptions options) {
    if (!method.fireAndForget()) {
      throw new IllegalArgumentException(method + " is not marked fire-and-forget");
    }
    return intercepted(
        method,
        options,
        o -> requester.fireAndForget(() -> payload(method, request, o, timeoutMicros(o))));
  }

  private <Req, Resp> Publisher<Resp> channel(
      MethodDescriptor<Req, Resp> method,
      Publisher<Req> requests,
      CallOptions options,
      boolean oneResponse) {
    Objects.requireNonNull(requests, "requests");
    Objects.requireNonNull(options, "options");
    Marshaller<Req> marshaller = method.requestMarshaller();
    long timeout = timeoutMicros(options);
    // One call per subscription: each gets its own outbound stream, closed when the call ends.
    return subscriber -> {
      PrefixedPublisher<Req, Payload> outbound =
          routing
              ? new PrefixedPublisher<>(null, requests, routedMessages(method), unused -> {})
              : PrefixedPublisher.encoding(
                  () -> Payload.of(header(method, options, timeout, true), Unpooled.EMPTY_BUFFER),
                  requests,
                  marshaller,
                  alloc);
      new ResponseReader<>(
              () -> requester.requestChannel(outbound),
              method.responseMarshaller(),
              options,
              oneResponse,
              routing,
              maxHeaderBytes,
              requester.connection().executor(),
              outbound::close)
          .subscribe(subscriber);
    };
  }

  /**
   * A routing caller's channel carries the route on its first message (as rsocket-java's and
   * Spring's do), so such a channel needs at least one request to open.
   */
  private <Req> Function<Req, Payload> routedMessages(MethodDescriptor<Req, ?> method) {
    Marshaller<Req> marshaller = method.requestMarshaller();
    return new Function<>() {
      private boolean first = true; // onNext is serial: no race

      @Override
      public Payload apply(Req r) {
        ByteBuf metadata = first ? routeMetadata(method) : null;
        first = false;
        ByteBuf data;
        try {
          data = marshaller.serialize(r, alloc);
        } catch (RuntimeException e) {
          if (metadata != null) {
            metadata.release();
          }
          throw e;
        }
        return Payload.of(metadata, data);
      }
    };
  }

  /** Sends a unary call's request on {@code connection}; its answer goes to {@code listener}. */
  <Req> Stream sendUnary(
      Connection connection,
      MethodDescriptor<Req, ?> method,
      Req request,
      CallOptions options,
      StreamListener listener) {
    Marshaller<Req> marshaller = method.requestMarshaller();
    PayloadEncoder<Req> encoder = marshaller.encoder();
    if (ResponsePublisher.encodesInFrame(encoder, request)) {
      // Written straight into the request frame, on the loop: no buffer of its own per call.
      ByteBuf metadata = requestMetadata(method, options, timeoutMicros(options), null);
      return connection.requestResponse(metadata, request, encoder, listener);
    }
    ByteBuf data = marshaller.serialize(request, alloc);
    ByteBuf metadata = requestMetadata(method, options, timeoutMicros(options), data);
    return connection.requestResponse(metadata, data, listener); // (it owns the buffers now)
  }

  /** Whether calls are routed with composite metadata (no call header, no response metadata). */
  boolean routes() {
    return routing;
  }

  int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  private <Req> Payload payload(
      MethodDescriptor<Req, ?> method, Req request, CallOptions options, long timeoutMicros) {
    Marshaller<Req> marshaller = method.requestMarshaller();
    PayloadEncoder<Req> encoder = marshaller.encoder();
    if (ResponsePublisher.encodesInFrame(encoder, request)) {
      // Written straight into the request frame when it is sent.
      return Payload.encoded(
          requestMetadata(method, options, timeoutMicros, null), request, encoder);
    }
    ByteBuf data = marshaller.serialize(request, alloc);
    return Payload.of(requestMetadata(method, options, timeoutMicros, data), data);
  }

  /**
   * A one-request call's metadata: its route or its call header; releases {@code data} (if any)
   * when it cannot be made.
   */
  private ByteBuf requestMetadata(
      MethodDescriptor<?, ?> method, CallOptions options, long timeoutMicros, ByteBuf data) {
    try {
      return routing ? routeMetadata(method) : header(method, options, timeoutMicros, false);
    } catch (RuntimeException e) {
      if (data != null) {
        data.release();
      }
      throw e;
    }
  }

  private ByteBuf header(
      MethodDescriptor<?, ?> method, CallOptions options, long timeoutMicros, boolean noMessage) {
    if (timeoutMicros == CallHeader.NO_TIMEOUT && options.headers().isEmpty() && !noMessage) {
      return method.plainCallHeader();
    }
    ByteBuf metadata = alloc.buffer(16);
    CallHeader.encode(metadata, method.id(), null, timeoutMicros, options.headers(), noMessage);
    return metadata;
  }

  private ByteBuf routeMetadata(MethodDescriptor<?, ?> method) {
    ByteBuf metadata = alloc.buffer();
    try {
      Routing.encodeComposite(metadata, method.route()); // throws for a route over 255 bytes
    } catch (RuntimeException e) {
      metadata.release();
      throw e;
    }
    return metadata;
  }

  private static long timeoutMicros(CallOptions options) {
    // (TimeUnit's conversion saturates: a timeout of centuries is the longest, not an overflow)
    return options.timeout() == null
        ? CallHeader.NO_TIMEOUT
        : Math.max(0, TimeUnit.MICROSECONDS.convert(options.timeout()));
  }

  private static void expect(MethodDescriptor<?, ?> method, MethodDescriptor.Type type) {
    if (method.type() != type) {
      throw new IllegalArgumentException(method + " is not " + type);
    }
  }
}
