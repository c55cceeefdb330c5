package io.millrace.rpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.google.protobuf.Int32Value;
import com.google.protobuf.StringValue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A service written by hand the way generated bindings will be, served over well-known types. */
final class TestService {
  static final String NAME = "test.v1.Probe";

  /** A call's context for Echo, without a connection: no deadline, a loop that runs tasks here. */
  static ServerContext echoContext() {
    return echoContext(io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE);
  }

  /** {@code method} as a server holds it, with no handler: for a context of a call of it. */
  static ServerMethod<?, ?> served(MethodDescriptor<?, ?> method) {
    return new ServerMethod<>(method, null, null);
  }

  /** The same, on {@code loop}. */
  static ServerContext echoContext(io.netty.util.concurrent.EventExecutor loop) {
    return new ServerContext(
        served(ECHO), Headers.EMPTY, CallHeader.NO_TIMEOUT, loop, 16, null, null);
  }

  static final MethodDescriptor<StringValue, StringValue> ECHO =
      MethodDescriptor.newBuilder(
              NAME + "/Echo",
              MethodDescriptor.Type.UNARY,
              ProtobufMarshaller.of(StringValue.getDefaultInstance()),
              ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();
  static final MethodDescriptor<Int32Value, Int32Value> COUNT =
      MethodDescriptor.newBuilder(
              NAME + "/Count",
              MethodDescriptor.Type.SERVER_STREAMING,
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()))
          .build();
  static final MethodDescriptor<Int32Value, Int32Value> SUM =
      MethodDescriptor.newBuilder(
              NAME + "/Sum",
              MethodDescriptor.Type.CLIENT_STREAMING,
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()))
          .build();
  static final MethodDescriptor<StringValue, StringValue> CHAT =
      MethodDescriptor.newBuilder(
              NAME + "/Chat",
              MethodDescriptor.Type.BIDI_STREAMING,
              ProtobufMarshaller.of(StringValue.getDefaultInstance()),
              ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();
  static final MethodDescriptor<StringValue, Empty> LOG =
      MethodDescriptor.newBuilder(
              NAME + "/Log",
              MethodDescriptor.Type.UNARY,
              ProtobufMarshaller.of(StringValue.getDefaultInstance()),
              ProtobufMarshaller.of(Empty.getDefaultInstance()))
          .fireAndForget(true)
          .build();

  /** n messages, then OK with a trailer. */
  static final MethodDescriptor<Int32Value, Int32Value> TRAILED =
      MethodDescriptor.newBuilder(
              NAME + "/Trailed",
              MethodDescriptor.Type.SERVER_STREAMING,
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()),
              ProtobufMarshaller.of(Int32Value.getDefaultInstance()))
          .build();

  /** Answers the first message and ends the call, whatever the caller still sends. */
  static final MethodDescriptor<StringValue, StringValue> FIRST_ONLY =
      MethodDescriptor.newBuilder(
              NAME + "/FirstOnly",
              MethodDescriptor.Type.BIDI_STREAMING,
              ProtobufMarshaller.of(StringValue.getDefaultInstance()),
              ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  /** Not served: calls to it are UNIMPLEMENTED. */
  static final MethodDescriptor<StringValue, StringValue> MISSING =
      MethodDescriptor.newBuilder(
              NAME + "/Missing",
              MethodDescriptor.Type.UNARY,
              ProtobufMarshaller.of(StringValue.getDefaultInstance()),
              ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  final LinkedBlockingQueue<String> logged = new LinkedBlockingQueue<>();
  final AtomicReference<Status> cancelledWith = new AtomicReference<>();
  final CountDownLatch cancelled = new CountDownLatch(1);
  final java.util.concurrent.atomic.AtomicInteger cancels =
      new java.util.concurrent.atomic.AtomicInteger();

  /** "slow" calls that reached their handler. */
  final java.util.concurrent.atomic.AtomicInteger slowCalls =
      new java.util.concurrent.atomic.AtomicInteger();

  final AtomicReference<String> seenHeader = new AtomicReference<>();

  static StringValue text(String s) {
    return StringValue.of(s);
  }

  static Int32Value number(int n) {
    return Int32Value.of(n);
  }

  ServiceDefinition definition() {
    return ServiceDefinition.builder(NAME)
        .method(ECHO, this::echo)
        .method(
            COUNT,
            (n, ctx) ->
                n.getValue() >= 0
                    ? Flux.range(0, n.getValue()).map(TestService::number)
                    : Flux.range(0, -n.getValue())
                        .map(TestService::number)
                        .concatWith(
                            Mono.error(
                                Status.of(Status.Code.OUT_OF_RANGE)
                                    .withMessage("ran out")
                                    .asException())))
        .streamingMethod(
            SUM,
            (requests, ctx) ->
                Flux.from(requests).reduce(0, (a, b) -> a + b.getValue()).map(TestService::number))
        .streamingMethod(
            CHAT, (requests, ctx) -> Flux.from(requests).map(s -> text("re: " + s.getValue())))
        .method(
            TRAILED,
            (n, ctx) ->
                Flux.range(0, n.getValue())
                    .map(TestService::number)
                    .doOnComplete(() -> ctx.trailers().put("x-count", "" + n.getValue())))
        .streamingMethod(FIRST_ONLY, (requests, ctx) -> Flux.from(requests).take(1))
        .method(
            LOG,
            (s, ctx) -> {
              logged.add(s.getValue());
              return Mono.empty();
            })
        .build();
  }

  private Mono<StringValue> echo(StringValue request, ServerContext ctx) {
    String v = request.getValue();
    if (v.startsWith("fail:")) {
      ctx.trailers().put("x-why", "asked");
      return Mono.error(
          Status.of(Status.Code.NOT_FOUND)
              .withMessage(v.substring(5))
              .withDetails(ByteString.copyFromUtf8("details"))
              .asException());
    }
    if (v.equals("throw")) {
      throw new IllegalStateException("secret internals");
    }
    if (v.equals("slow")) {
      slowCalls.incrementAndGet();
      ctx.onCancel(
          () -> {
            cancelledWith.set(ctx.cancellation());
            cancels.incrementAndGet();
            cancelled.countDown();
          });
      return Mono.never();
    }
    if (v.equals("peer")) { // who called, as the context tells it
      return Mono.just(text(ctx.remoteAddress() + " tls=" + (ctx.tlsSession() != null)));
    }
    if (v.equals("headers")) {
      seenHeader.set(ctx.requestHeaders().get("x-req"));
      ctx.responseHeaders().put("x-resp", "h");
      ctx.trailers().put("x-trail", "t");
    }
    return Mono.just(text(v));
  }
}
