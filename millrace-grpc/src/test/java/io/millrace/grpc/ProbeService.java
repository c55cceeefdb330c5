package io.millrace.grpc;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.ProtobufMarshaller;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import io.millrace.rpc.Status;
import io.millrace.testing.AnsweredAtOnce;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import reactor.core.publisher.Mono;

/**
 * A Millrace service for the bridge's tests, next to the echo service: headers and trailers, status
 * details, a call that never answers until it is cancelled (recording how), and an endless stream.
 */
final class ProbeService {
  static final String NAME = "millrace.test.Probe";

  static final MethodDescriptor<EchoRequest, EchoReply> HEADERS = unary(NAME + "/Headers");
  static final MethodDescriptor<EchoRequest, EchoReply> HANG = unary(NAME + "/Hang");
  static final MethodDescriptor<EchoRequest, EchoReply> DETAILS = unary(NAME + "/Details");
  static final MethodDescriptor<EchoRequest, EchoReply> REFUSE = unary(NAME + "/Refuse");

  /**
   * Answers with an {@link AnsweredAtOnce}: the payload echoed, no value when {@code
   * fail_with_status} is -1, that status when it is positive.
   */
  static final MethodDescriptor<EchoRequest, EchoReply> AT_ONCE = unary(NAME + "/AtOnce");

  /** The answers AT_ONCE gave. */
  final java.util.List<AnsweredAtOnce<EchoReply>> atOnce =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Client streaming: reads every request and never answers. */
  static final MethodDescriptor<EchoRequest, EchoReply> DRAIN =
      MethodDescriptor.newBuilder(
              NAME + "/Drain",
              MethodDescriptor.Type.CLIENT_STREAMING,
              ProtobufMarshaller.of(EchoRequest.getDefaultInstance()),
              ProtobufMarshaller.of(EchoReply.getDefaultInstance()))
          .build();

  /**
   * Server streaming: 64 KiB replies for as long as the caller wants them, or as many as the
   * request's {@code fail_with_status} when that is positive (then the call ends OK).
   */
  static final MethodDescriptor<EchoRequest, EchoReply> FLOOD =
      MethodDescriptor.newBuilder(
              NAME + "/Flood",
              MethodDescriptor.Type.SERVER_STREAMING,
              ProtobufMarshaller.of(EchoRequest.getDefaultInstance()),
              ProtobufMarshaller.of(EchoReply.getDefaultInstance()))
          .build();

  static final int FLOOD_REPLY_BYTES = 64 * 1024;

  /** How many replies the flood has produced (as demand asked for them). */
  final java.util.concurrent.atomic.AtomicLong flooded =
      new java.util.concurrent.atomic.AtomicLong();

  /** How many bounded floods have produced their last reply. */
  final java.util.concurrent.atomic.AtomicInteger floodsDone =
      new java.util.concurrent.atomic.AtomicInteger();

  /** How the draining call was cancelled, and what its request stream ended with. */
  final CompletableFuture<Status> drainCancelled = new CompletableFuture<>();

  final CompletableFuture<Throwable> drainRequestsEnded = new CompletableFuture<>();
  final java.util.concurrent.atomic.AtomicInteger drained =
      new java.util.concurrent.atomic.AtomicInteger();

  /** How the hanging call was cancelled. */
  final CompletableFuture<Status> hangCancelled = new CompletableFuture<>();

  final CountDownLatch hangStarted = new CountDownLatch(1);

  static MethodDescriptor<EchoRequest, EchoReply> unary(String name) {
    return MethodDescriptor.newBuilder(
            name,
            MethodDescriptor.Type.UNARY,
            ProtobufMarshaller.of(EchoRequest.getDefaultInstance()),
            ProtobufMarshaller.of(EchoReply.getDefaultInstance()))
        .build();
  }

  ServiceDefinition definition() {
    return ServiceDefinition.builder(NAME)
        .method(HEADERS, (request, context) -> headers(context))
        .method(
            HANG,
            (request, context) -> {
              context.onCancel(() -> hangCancelled.complete(context.cancellation()));
              hangStarted.countDown();
              return Mono.never();
            })
        .method(
            AT_ONCE,
            (request, context) -> {
              AnsweredAtOnce<EchoReply> a =
                  AnsweredAtOnce.of(
                      () -> {
                        int fail = request.getFailWithStatus();
                        if (fail > 0) {
                          throw Status.of(Status.Code.of(fail))
                              .withMessage(request.getFailMessage())
                              .asException();
                        }
                        return fail < 0
                            ? null
                            : EchoReply.newBuilder().setPayload(request.getPayload()).build();
                      });
              atOnce.add(a);
              return a;
            })
        .method(
            REFUSE,
            (request, context) -> {
              context.responseHeaders().put("x-why", "closed for lunch");
              return Mono.error(Status.of(Status.Code.UNAVAILABLE).asException());
            })
        .streamingMethod(
            DRAIN,
            (requests, context) -> {
              context.onCancel(() -> drainCancelled.complete(context.cancellation()));
              reactor.core.publisher.Flux.from(requests)
                  .subscribe(
                      r -> drained.incrementAndGet(),
                      drainRequestsEnded::complete,
                      () -> drainRequestsEnded.complete(null));
              return Mono.never();
            })
        .method(
            FLOOD,
            (request, context) -> {
              EchoReply reply =
                  EchoReply.newBuilder()
                      .setPayload(ByteString.copyFrom(new byte[FLOOD_REPLY_BYTES]))
                      .build();
              reactor.core.publisher.Flux<EchoReply> flood =
                  reactor.core.publisher.Flux.generate(
                      sink ->
                          sink.next(
                              reply.toBuilder().setSequence(flooded.getAndIncrement()).build()));
              int limit = request.getFailWithStatus();
              return limit <= 0
                  ? flood
                  : flood.take(limit).doOnComplete(floodsDone::incrementAndGet);
            })
        .method(
            DETAILS,
            (request, context) ->
                Mono.error(
                    Status.of(Status.Code.FAILED_PRECONDITION)
                        .withMessage("détails ✓ 100%")
                        .withDetails(
                            com.google.rpc.Status.newBuilder()
                                .addDetails(
                                    com.google.protobuf.Any.pack(
                                        com.google.rpc.ErrorInfo.newBuilder()
                                            .setReason("STOCK_EMPTY")
                                            .build()))
                                .build()
                                .toByteString())
                        .asException()))
        .build();
  }

  /**
   * Answers {@code x-token/length of x-blob-bin/caller's IP}; sets a response header and a binary
   * trailer.
   */
  private static Mono<EchoReply> headers(ServerContext context) {
    context.responseHeaders().put("x-served-by", "millrace");
    context.trailers().putBinary("x-trailer-bin", new byte[] {0, 1, (byte) 0xFF});
    String token = context.requestHeaders().get("x-token");
    byte[] binary = context.requestHeaders().getBinary("x-blob-bin");
    String from =
        context.remoteAddress() instanceof java.net.InetSocketAddress a
            ? a.getAddress().getHostAddress()
            : "?";
    return Mono.just(
        EchoReply.newBuilder()
            .setPayload(
                ByteString.copyFromUtf8(
                    token + "/" + (binary == null ? "-" : binary.length) + "/" + from))
            .build());
  }
}
