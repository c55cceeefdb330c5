package io.millrace.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.millrace.rpc.RpcClient;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * A grpc-java {@link Channel} over a Millrace connection: grpc-java's generated stubs (blocking,
 * async, future) and its {@code ClientCalls} call Millrace services (or grpc-java services hosted
 * on a Millrace server, {@link HostedServices}) unchanged, with their status codes, deadlines (the
 * call's and the {@code io.grpc.Context}'s), metadata, cancellation and {@code ClientInterceptor}s.
 *
 * <pre>{@code
 * Channel channel = MillraceChannel.of(RpcClient.of(requester));
 * GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel);
 * }</pre>
 *
 * <p>Listener callbacks run one at a time on the call's executor ({@code
 * CallOptions.withExecutor}), else on this channel's, else on the connection's event loop: keep
 * them short there, as with grpc-java's {@code directExecutor()}. The blocking stubs run their own
 * executor and block the calling thread only (virtual threads included).
 */
public final class MillraceChannel extends Channel {
  private final RpcClient rpc;
  private final String authority;
  private final Executor executor;
  private static final int MAX_CACHED_METHODS = 4096;

  private final Map<MethodDescriptor<?, ?>, io.millrace.rpc.MethodDescriptor<?, ?>> methods =
      new ConcurrentHashMap<>();

  private MillraceChannel(RpcClient rpc, String authority, Executor executor) {
    this.rpc = rpc;
    this.authority = authority;
    this.executor = executor;
  }

  /** Calls over {@code rpc}; listeners run on the connection's event loop unless a call says. */
  public static MillraceChannel of(RpcClient rpc) {
    return new MillraceChannel(Objects.requireNonNull(rpc, "rpc"), "millrace", null);
  }

  /** Calls over {@code rpc}, with listeners on {@code executor} unless a call says otherwise. */
  public static MillraceChannel of(RpcClient rpc, Executor executor) {
    return new MillraceChannel(
        Objects.requireNonNull(rpc, "rpc"),
        "millrace",
        Objects.requireNonNull(executor, "executor"));
  }

  @Override
  public <Req, Resp> ClientCall<Req, Resp> newCall(
      MethodDescriptor<Req, Resp> method, CallOptions callOptions) {
    Executor callbacks = callOptions.getExecutor() != null ? callOptions.getExecutor() : executor;
    io.millrace.rpc.MethodDescriptor<Req, Resp> m = millraceMethod(method);
    Integer maxOut = callOptions.getMaxOutboundMessageSize();
    Integer maxIn = callOptions.getMaxInboundMessageSize();
    if (maxOut != null || maxIn != null) {
      // Rare: a descriptor of this call's own, whose marshallers check each message's size.
      m = limited(m, maxOut, maxIn);
    }
    return new MillraceClientCall<>(rpc, m, callOptions, callbacks);
  }

  private static <Req, Resp> io.millrace.rpc.MethodDescriptor<Req, Resp> limited(
      io.millrace.rpc.MethodDescriptor<Req, Resp> m, Integer maxOut, Integer maxIn) {
    return io.millrace.rpc.MethodDescriptor.newBuilder(
            m.fullName(),
            m.type(),
            Marshallers.sizeLimited(m.requestMarshaller(), maxOut, null),
            Marshallers.sizeLimited(m.responseMarshaller(), null, maxIn))
        .fireAndForget(m.fireAndForget())
        .idempotent(m.idempotent())
        .build();
  }

  @SuppressWarnings("unchecked")
  private <Req, Resp> io.millrace.rpc.MethodDescriptor<Req, Resp> millraceMethod(
      MethodDescriptor<Req, Resp> method) {
    // Generated stubs keep one descriptor per method: made once, looked up by identity after. A
    // caller that makes descriptors per call gets them converted per call, not a growing map.
    io.millrace.rpc.MethodDescriptor<?, ?> known = methods.get(method);
    if (known == null) {
      known = GrpcServices.fromGrpc(method);
      if (methods.size() < MAX_CACHED_METHODS) {
        methods.putIfAbsent(method, known);
      }
    }
    return (io.millrace.rpc.MethodDescriptor<Req, Resp>) known;
  }

  @Override
  public String authority() {
    return authority;
  }
}
