package io.millrace.grpc;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.millrace.rpc.BridgedCall;
import io.millrace.rpc.Headers;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.Status;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Serves one of an {@link RpcServer}'s methods to gRPC callers: each gRPC call becomes a {@link
 * BridgedCall}, so the server's interceptors and the method's handler run as for a call over
 * RSocket. gRPC enforces the deadline (grpc-timeout) and reports it, with client cancellation, as
 * the listener's onCancel, which cancels the Millrace call.
 */
final class ServedMethod<Req, Resp> implements ServerCallHandler<Req, Resp> {
  private final RpcServer server;
  private final MethodDescriptor<Req, Resp> method;
  private final EventExecutorGroup loops;

  ServedMethod(RpcServer server, MethodDescriptor<Req, Resp> method, EventExecutorGroup loops) {
    this.server = server;
    this.method = method;
    this.loops = loops;
  }

  @Override
  public ServerCall.Listener<Req> startCall(ServerCall<Req, Resp> call, Metadata metadata) {
    Headers headers = GrpcMetadata.toHeadersSkippingInvalid(metadata, "a gRPC caller");
    Deadline deadline = Context.current().getDeadline();
    Duration timeout =
        deadline == null ? null : Duration.ofNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS));
    EventExecutor loop = ThreadExecutorMap.currentExecutor();
    if (loop == null) {
      loop = loops.next(); // a handler executor runs the call: observers serialize on a loop
    }
    if ("gzip".equals(metadata.get(ENCODING))) {
      call.setCompression("gzip"); // a client that compresses gets compressed answers
    }
    io.grpc.Attributes transport = call.getAttributes();
    BridgedCall<Req, Resp> bridged =
        BridgedCall.of(
            server,
            method,
            headers,
            timeout,
            loop,
            transport.get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR),
            transport.get(io.grpc.Grpc.TRANSPORT_ATTR_SSL_SESSION));
    boolean oneResponse = !method.type().serverSendsStream();
    ResponseSender<Resp> sender = new ResponseSender<>(call, bridged, oneResponse);
    if (method.type().clientSendsStream()) {
      RequestPublisher<Req> requests = new RequestPublisher<>(call);
      bridged.call(requests).subscribe(sender);
      return new StreamingListener<>(requests, sender, bridged, deadline);
    }
    call.request(2); // one request; a second is an error
    return new SingleListener<>(call, sender, bridged, deadline);
  }

  private static final Metadata.Key<String> ENCODING =
      Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * A client whose deadline passes resets the stream (RST_STREAM CANCEL) at about the moment the
   * server's copy of that deadline passes: which one the server hears first is a race of a few
   * milliseconds (more when the loop was busy as the headers came). A cancel that close to the
   * deadline is taken as the deadline.
   */
  private static final long DEADLINE_TOLERANCE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  /** CANCELLED, or DEADLINE_EXCEEDED when the call's deadline has passed or is about to. */
  private static Status cancellation(Deadline deadline) {
    return deadline != null
            && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= DEADLINE_TOLERANCE_NANOS
        ? Status.DEADLINE_EXCEEDED
        : Status.CANCELLED;
  }

  /** A call whose client sends one message: the handler runs when the client has sent it. */
  private static final class SingleListener<Req, Resp> extends ServerCall.Listener<Req> {
    private final ServerCall<Req, Resp> call;
    private final ResponseSender<Resp> sender;
    private final BridgedCall<Req, Resp> bridged;
    private final Deadline deadline;
    private Req request;
    private boolean failed;

    SingleListener(
        ServerCall<Req, Resp> call,
        ResponseSender<Resp> sender,
        BridgedCall<Req, Resp> bridged,
        Deadline deadline) {
      this.call = call;
      this.sender = sender;
      this.bridged = bridged;
      this.deadline = deadline;
    }

    @Override
    public void onMessage(Req message) {
      if (failed) {
        return;
      }
      if (request != null) {
        failed = true;
        call.close(
            io.grpc.Status.INTERNAL.withDescription("too many requests for a unary method"),
            new Metadata());
        return;
      }
      request = message;
    }

    @Override
    public void onHalfClose() {
      if (failed) {
        return;
      }
      if (request == null) {
        failed = true;
        call.close(
            io.grpc.Status.INTERNAL.withDescription("the call ended without a request"),
            new Metadata());
        return;
      }
      Req r = request;
      request = null;
      sender.take(bridged.call(r));
    }

    @Override
    public void onReady() {
      sender.onReady();
    }

    @Override
    public void onCancel() {
      request = null;
      bridged.cancel(cancellation(deadline));
      sender.cancel();
    }
  }

  /** A call whose client sends a stream: the handler reads it as a Publisher. */
  private static final class StreamingListener<Req, Resp> extends ServerCall.Listener<Req> {
    private final RequestPublisher<Req> requests;
    private final ResponseSender<Resp> sender;
    private final BridgedCall<Req, Resp> bridged;
    private final Deadline deadline;

    StreamingListener(
        RequestPublisher<Req> requests,
        ResponseSender<Resp> sender,
        BridgedCall<Req, Resp> bridged,
        Deadline deadline) {
      this.requests = requests;
      this.sender = sender;
      this.bridged = bridged;
      this.deadline = deadline;
    }

    @Override
    public void onMessage(Req message) {
      requests.onMessage(message);
    }

    @Override
    public void onHalfClose() {
      requests.onHalfClose();
    }

    @Override
    public void onReady() {
      sender.onReady();
    }

    @Override
    public void onCancel() {
      Status why = cancellation(deadline);
      bridged.cancel(why);
      requests.onCancel(why);
      sender.cancel();
    }
  }
}
