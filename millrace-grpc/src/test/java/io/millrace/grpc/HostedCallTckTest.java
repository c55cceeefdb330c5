package io.millrace.grpc;

import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.rpc.BridgedCall;
import io.millrace.rpc.Headers;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link HostedCall}, a grpc-java service's call hosted on Millrace:
 * its responses as a Publisher, from {@link HostedServicesTest.GrpcEcho}'s Count (which sends while
 * {@code isReady}, grpc-java's flow-control pattern, so demand is what holds it back). A call's
 * context comes from the bridge's own entry point ({@link BridgedCall}), without a connection.
 */
public class HostedCallTckTest extends PublisherVerification<EchoReply> {
  /** Where the calls' flavours serialize their signals; a daemon thread, left to the JVM's exit. */
  static final EventExecutor LOOP =
      new DefaultEventExecutor(new DefaultThreadFactory("hosted-loop", true));

  static final ServerServiceDefinition GRPC = new HostedServicesTest.GrpcEcho().bindService();
  static final RpcServer RPC = RpcServer.builder().service(HostedServices.of(null, GRPC)).build();

  public HostedCallTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** A new call's context for the hosted {@code method} ("Count", say). */
  @SuppressWarnings("unchecked")
  static <Req, Resp> ServerContext context(String method) {
    MethodDescriptor<Req, Resp> m =
        (MethodDescriptor<Req, Resp>)
            RPC.services().get(0).methods().stream()
                .filter(d -> d.fullName().endsWith("/" + method))
                .findFirst()
                .orElseThrow();
    return BridgedCall.of(RPC, m, Headers.EMPTY, null, LOOP, null).context();
  }

  @SuppressWarnings("unchecked")
  static <Req, Resp> ServerCallHandler<Req, Resp> handler(io.grpc.MethodDescriptor<Req, Resp> m) {
    return (ServerCallHandler<Req, Resp>)
        GRPC.getMethod(m.getFullMethodName()).getServerCallHandler();
  }

  @Override
  public Publisher<EchoReply> createPublisher(long elements) {
    var method = EchoServiceGrpc.getCountMethod();
    CountRequest request =
        CountRequest.newBuilder().setN((int) Math.min(elements, Integer.MAX_VALUE)).build();
    return HostedCall.single(method, handler(method), null, request, context("Count"));
  }

  /** A unary call whose service fails it (Echo with a status): told without demand. */
  @Override
  public Publisher<EchoReply> createFailedPublisher() {
    var method = EchoServiceGrpc.getEchoMethod();
    EchoRequest request =
        EchoRequest.newBuilder().setFailWithStatus(14).setFailMessage("failed on purpose").build();
    return HostedCall.single(method, handler(method), null, request, context("Echo"));
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }
}
