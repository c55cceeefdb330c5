package io.millrace.rpc;

import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.Objects;
import org.reactivestreams.Publisher;

/**
 * A call of one of an {@link RpcServer}'s methods that arrived by another protocol: the gRPC
 * endpoint (millrace-grpc) makes one for each gRPC call it serves. It runs the server's
 * interceptors and the method's handler exactly as a call over RSocket does, and hands over the
 * responses as a Publisher; the bridge sends them with the response headers and trailers, reports
 * the call's cancellation, and is the one that enforces the deadline.
 *
 * <p>Not for applications: handlers and interceptors see the same {@link ServerContext} whichever
 * protocol the call came by.
 */
public final class BridgedCall<Req, Resp> {
  private final RpcServer server;
  private final ServerMethod<Req, Resp> method;
  private final ServerContext context;

  private BridgedCall(RpcServer server, ServerMethod<Req, Resp> method, ServerContext context) {
    this.server = server;
    this.method = method;
    this.context = context;
  }

  /**
   * A call of {@code method}, which {@code server} must serve, with the caller's {@code headers}
   * and {@code timeout} (null: no deadline), from {@code remoteAddress} (null: unknown). {@code
   * loop} is where the flavours that serialize a call's signals (StreamObserver) run them: the
   * bridge's event loop for the call when it has one.
   *
   * @throws IllegalArgumentException when {@code server} does not serve {@code method}
   */
  public static <Req, Resp> BridgedCall<Req, Resp> of(
      RpcServer server,
      MethodDescriptor<Req, Resp> method,
      Headers headers,
      Duration timeout,
      EventExecutor loop,
      java.net.SocketAddress remoteAddress) {
    return of(server, method, headers, timeout, loop, remoteAddress, null);
  }

  /**
   * {@link #of(RpcServer, MethodDescriptor, Headers, Duration, EventExecutor,
   * java.net.SocketAddress)} from a caller over TLS ({@code tlsSession}, null: not over TLS).
   */
  @SuppressWarnings("unchecked")
  public static <Req, Resp> BridgedCall<Req, Resp> of(
      RpcServer server,
      MethodDescriptor<Req, Resp> method,
      Headers headers,
      Duration timeout,
      EventExecutor loop,
      java.net.SocketAddress remoteAddress,
      javax.net.ssl.SSLSession tlsSession) {
    ServerMethod<?, ?> served = server.method(method.id());
    if (served == null || served.descriptor() != method) {
      throw new IllegalArgumentException(method + " is not served by this server");
    }
    long timeoutMicros = timeout == null ? CallHeader.NO_TIMEOUT : saturatedMicros(timeout);
    ServerContext context =
        new ServerContext(
            served,
            Objects.requireNonNull(headers, "headers"),
            timeoutMicros,
            Objects.requireNonNull(loop, "loop"),
            server.options().prefetch(),
            remoteAddress,
            tlsSession == null ? null : () -> tlsSession);
    return new BridgedCall<>(server, (ServerMethod<Req, Resp>) served, context);
  }

  /** {@code d} in microseconds, 0 when negative (already passed), saturated when huge. */
  private static long saturatedMicros(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    try {
      return d.toNanos() / 1_000;
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  public MethodDescriptor<Req, Resp> method() {
    return method.descriptor();
  }

  /** The context the interceptors and the handler see. */
  public ServerContext context() {
    return context;
  }

  /**
   * Runs a unary, server-streaming or fire-and-forget method: the responses, which the bridge
   * subscribes to once (a unary method should give exactly one; a fire-and-forget method gives its
   * response type's empty message once its handler is done, as the bridge's callers wait for one).
   */
  public Publisher<Resp> call(Req request) {
    if (method.single() == null) {
      throw new IllegalStateException(method.descriptor() + " takes a stream of requests");
    }
    return server.intercepted(context, () -> method.answer(request, context));
  }

  /** Runs a client-streaming or bidirectional method over the caller's {@code requests}. */
  public Publisher<Resp> call(Publisher<Req> requests) {
    if (method.streaming() == null) {
      throw new IllegalStateException(method.descriptor() + " takes one request");
    }
    return server.intercepted(context, () -> method.streaming().handle(requests, context));
  }

  /** The response headers the handler set, taken once: null when there are none (yet). */
  public Headers takeResponseHeaders() {
    return context.takeResponseHeaders();
  }

  /** The trailers the handler set, or null when none. */
  public Headers trailers() {
    return context.trailersOrNull();
  }

  /**
   * Marks the call cancelled with {@code why} (CANCELLED or DEADLINE_EXCEEDED) and runs the
   * handler's cancel hooks; false when it already was.
   */
  public boolean cancel(Status why) {
    return context.cancel(why);
  }
}
