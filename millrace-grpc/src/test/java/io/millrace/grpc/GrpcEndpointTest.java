package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.ProtobufMarshaller;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServerInterceptor;
import io.millrace.rpc.ServiceDefinition;
import io.millrace.rpc.Status;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Millrace services called by grpc-java's own client (its generated stubs for echo.proto and its
 * ClientCalls) through {@link GrpcEndpoint}: every interaction, statuses, headers and trailers,
 * deadlines and cancellation reaching the handler, the server's interceptors, gzip, and the health
 * and reflection services that tools use.
 */
class GrpcEndpointTest {
  private static final long WAIT_S = 10;

  private final EchoServiceImpl echo = new EchoServiceImpl();
  private final ProbeService probe = new ProbeService();
  private final AtomicInteger intercepted = new AtomicInteger();
  private GrpcEndpoint endpoint;
  private ManagedChannel channel;

  @BeforeEach
  void start() {
    ServerInterceptor refuseNoEntry =
        new ServerInterceptor() {
          @Override
          public void onCall(ServerContext call) {
            intercepted.incrementAndGet();
            if ("no".equals(call.requestHeaders().get("x-entry"))) {
              throw Status.of(Status.Code.UNAUTHENTICATED).withMessage("no entry").asException();
            }
          }
        };
    RpcServer rpc =
        RpcServer.builder()
            .service(EchoServiceReactor.bind(echo))
            .service(probe.definition())
            .interceptor(refuseNoEntry)
            .build();
    endpoint =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start();
    channel =
        NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port())
            .usePlaintext()
            .directExecutor()
            .build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    endpoint.close();
  }

  private EchoServiceGrpc.EchoServiceBlockingStub blocking() {
    return EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void unary_echoesThePayload() {
    assertThat(blocking().echo(request("hi")).getPayload().toStringUtf8()).isEqualTo("hi");
  }

  @Test
  void unary_failure_carriesTheStatusAndAUtf8Message() {
    EchoRequest failing =
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.PERMISSION_DENIED.value())
            .setFailMessage("nicht für dich: 50% ✗")
            .build();
    assertThatThrownBy(() -> blocking().echo(failing))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.PERMISSION_DENIED);
              assertThat(e.getStatus().getDescription()).isEqualTo("nicht für dich: 50% ✗");
            });
  }

  @Test
  void serverStreaming_deliversEveryReplyInOrder() {
    Iterator<EchoReply> replies = blocking().count(CountRequest.newBuilder().setN(5000).build());
    long expected = 0;
    while (replies.hasNext()) {
      assertThat(replies.next().getSequence()).isEqualTo(expected++);
    }
    assertThat(expected).isEqualTo(5000);
  }

  @Test
  void serverStreaming_aSlowReaderHoldsTheHandlerBack() throws Exception {
    // A client that asks for one message at a time: the handler is not asked for everything.
    AtomicInteger produced = new AtomicInteger();
    MethodDescriptor<EchoRequest, EchoReply> stream =
        MethodDescriptor.newBuilder(
                "millrace.test.Lots/Stream",
                MethodDescriptor.Type.SERVER_STREAMING,
                ProtobufMarshaller.of(EchoRequest.getDefaultInstance()),
                ProtobufMarshaller.of(EchoReply.getDefaultInstance()))
            .build();
    ServiceDefinition lots =
        ServiceDefinition.builder("millrace.test.Lots")
            .method(
                stream,
                (request, context) ->
                    Flux.range(0, 1_000_000)
                        .doOnNext(i -> produced.incrementAndGet())
                        .map(
                            i ->
                                EchoReply.newBuilder()
                                    .setSequence(i)
                                    .setPayload(ByteString.copyFrom(new byte[1024]))
                                    .build()))
            .build();
    RpcServer rpc = RpcServer.builder().service(lots).build();
    try (GrpcEndpoint other =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start()) {
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", other.port())
              .usePlaintext()
              .flowControlWindow(64 * 1024)
              .build();
      try {
        ClientCall<EchoRequest, EchoReply> call =
            ch.newCall(GrpcServices.toGrpc(stream, null), CallOptions.DEFAULT);
        CountDownLatch got = new CountDownLatch(10);
        call.start(
            new ClientCall.Listener<>() {
              @Override
              public void onMessage(EchoReply message) {
                got.countDown();
              }
            },
            new Metadata());
        call.sendMessage(request("go"));
        call.halfClose();
        call.request(10);
        assertThat(got.await(WAIT_S, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(300); // let the server run as far as it can
        // 10 read, the HTTP/2 windows (64 KiB client + the server's buffers) and the bridge's
        // window of 16: a few hundred 1 KiB messages at most, nowhere near the million.
        assertThat(produced.get()).isLessThan(2_000);
        call.cancel("done", null);
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void clientStreaming_andBidi_workWithTheAsyncStub() throws Exception {
    EchoServiceGrpc.EchoServiceStub async =
        EchoServiceGrpc.newStub(channel).withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
    CompletableFuture<EchoReply> collected = new CompletableFuture<>();
    StreamObserver<EchoRequest> collect = async.collect(observer(new ArrayList<>(), collected));
    for (int i = 0; i < 100; i++) {
      collect.onNext(request("x" + i));
    }
    collect.onCompleted();
    EchoReply reply = collected.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(reply.getSequence()).isEqualTo(100);
    assertThat(reply.getPayload().toStringUtf8()).startsWith("x0x1x2").endsWith("x99");

    List<EchoReply> chatted = new ArrayList<>();
    CompletableFuture<EchoReply> chatDone = new CompletableFuture<>();
    StreamObserver<EchoRequest> chat = async.chat(observer(chatted, chatDone));
    for (int i = 0; i < 50; i++) {
      chat.onNext(request("c" + i));
    }
    chat.onCompleted();
    chatDone.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(chatted).hasSize(50);
    for (int i = 0; i < 50; i++) {
      assertThat(chatted.get(i).getSequence()).isEqualTo(i);
      assertThat(chatted.get(i).getPayload().toStringUtf8()).isEqualTo("c" + i);
    }
  }

  @Test
  void clientStreaming_withNoMessage_answersAnEmptyCollection() throws Exception {
    CompletableFuture<EchoReply> collected = new CompletableFuture<>();
    StreamObserver<EchoRequest> collect =
        EchoServiceGrpc.newStub(channel).collect(observer(new ArrayList<>(), collected));
    collect.onCompleted();
    assertThat(collected.get(WAIT_S, TimeUnit.SECONDS).getSequence()).isZero();
  }

  private static StreamObserver<EchoReply> observer(
      List<EchoReply> into, CompletableFuture<EchoReply> done) {
    return new StreamObserver<>() {
      private EchoReply last;

      @Override
      public synchronized void onNext(EchoReply value) {
        into.add(value);
        last = value;
      }

      @Override
      public void onError(Throwable t) {
        done.completeExceptionally(t);
      }

      @Override
      public synchronized void onCompleted() {
        done.complete(last);
      }
    };
  }

  /**
   * A header Millrace's headers cannot carry (a tab, bytes beyond ASCII: a proxy may add such) is
   * left out, and the call goes on, as grpc-java's server passes it on rather than failing.
   */
  @Test
  void aRequestHeaderMillraceCannotCarry_isLeftOut_theCallGoesOn() {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("x-token", Metadata.ASCII_STRING_MARSHALLER), "t0k3n");
    headers.put(Metadata.Key.of("x-odd", Metadata.ASCII_STRING_MARSHALLER), "tab\there");
    EchoReply reply =
        ClientCalls.blockingUnaryCall(
            io.grpc.ClientInterceptors.intercept(
                channel, MetadataUtils.newAttachHeadersInterceptor(headers)),
            GrpcServices.toGrpc(ProbeService.HEADERS, null),
            CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
            request(""));
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo("t0k3n/-/127.0.0.1");
  }

  @Test
  void fireAndForget_isAUnaryCallAnsweredWithTheDefaultMessage() throws Exception {
    EchoReply reply = blocking().notify(request("n"));
    assertThat(reply).isEqualTo(EchoReply.getDefaultInstance());
    assertThat(echo.notified()).isEqualTo(1);
  }

  @Test
  void headers_reachTheHandler_andResponseHeadersAndTrailersReachTheClient() {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("x-token", Metadata.ASCII_STRING_MARSHALLER), "t0k3n");
    headers.put(Metadata.Key.of("x-blob-bin", Metadata.BINARY_BYTE_MARSHALLER), new byte[7]);
    var responseHeaders = new java.util.concurrent.atomic.AtomicReference<Metadata>();
    var trailers = new java.util.concurrent.atomic.AtomicReference<Metadata>();
    EchoReply reply =
        ClientCalls.blockingUnaryCall(
            channel.newCall(
                GrpcServices.toGrpc(ProbeService.HEADERS, null),
                CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS)),
            request(""));
    assertThat(reply.getPayload().toStringUtf8())
        .isEqualTo("null/-/127.0.0.1"); // no headers sent yet

    io.grpc.Channel withHeaders =
        io.grpc.ClientInterceptors.intercept(
            channel,
            MetadataUtils.newAttachHeadersInterceptor(headers),
            MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers));
    reply =
        ClientCalls.blockingUnaryCall(
            withHeaders,
            GrpcServices.toGrpc(ProbeService.HEADERS, null),
            CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
            request(""));
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo("t0k3n/7/127.0.0.1");
    assertThat(
            responseHeaders
                .get()
                .get(Metadata.Key.of("x-served-by", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("millrace");
    assertThat(
            trailers.get().get(Metadata.Key.of("x-trailer-bin", Metadata.BINARY_BYTE_MARSHALLER)))
        .containsExactly(0, 1, 0xFF);
  }

  @Test
  void statusDetails_travelInTheDetailsTrailer() {
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    GrpcServices.toGrpc(ProbeService.DETAILS, null),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode())
                  .isEqualTo(io.grpc.Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription()).isEqualTo("détails ✓ 100%");
              // As grpc-java's StatusProto reads it: code and message agree with the status.
              com.google.rpc.Status details = io.grpc.protobuf.StatusProto.fromThrowable(e);
              assertThat(details.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
              assertThat(details.getMessage()).isEqualTo("détails ✓ 100%");
              assertThat(details.getDetails(0).getTypeUrl()).endsWith("google.rpc.ErrorInfo");
            });
  }

  @Test
  void detailsOnTheWire_agreeWithTheStatus_whateverTheHandlerGave() throws Exception {
    assertThat(GrpcMetadata.detailsOnTheWire(Status.of(Status.Code.INTERNAL))).isNull();
    Status opaque =
        Status.of(Status.Code.ABORTED)
            .withMessage("m")
            .withDetails(ByteString.copyFrom(new byte[] {(byte) 0xFF, 0x01}));
    com.google.rpc.Status sent =
        com.google.rpc.Status.parseFrom(GrpcMetadata.detailsOnTheWire(opaque));
    assertThat(sent.getCode()).isEqualTo(Status.Code.ABORTED.value());
    assertThat(sent.getMessage()).isEqualTo("m");
    Status disagreeing =
        Status.of(Status.Code.ABORTED)
            .withDetails(
                com.google.rpc.Status.newBuilder()
                    .setCode(5)
                    .setMessage("x")
                    .build()
                    .toByteString());
    sent = com.google.rpc.Status.parseFrom(GrpcMetadata.detailsOnTheWire(disagreeing));
    assertThat(sent.getCode()).isEqualTo(Status.Code.ABORTED.value());
    assertThat(sent.getMessage()).isEmpty();
  }

  @Test
  void deadline_cancelsTheHandler_withDeadlineExceeded() throws Exception {
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    GrpcServices.toGrpc(ProbeService.HANG, null),
                    CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED));
    // The server's own timer says DEADLINE_EXCEEDED; the client's RST_STREAM at its deadline is
    // taken as that within 20 ms of the server's, and as CANCELLED when a stalled machine delivers
    // it earlier than that (the race gRPC itself has).
    assertThat(probe.hangCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
  }

  @Test
  void clientCancellation_reachesTheHandler() throws Exception {
    ClientCall<EchoRequest, EchoReply> call =
        channel.newCall(GrpcServices.toGrpc(ProbeService.HANG, null), CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {}, new Metadata());
    call.sendMessage(request(""));
    call.halfClose();
    call.request(1);
    assertThat(probe.hangStarted.await(WAIT_S, TimeUnit.SECONDS)).isTrue();
    call.cancel("changed my mind", null);
    assertThat(probe.hangCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isEqualTo(Status.Code.CANCELLED);
  }

  @Test
  void theServersInterceptors_runForGrpcCalls() {
    Metadata refused = new Metadata();
    refused.put(Metadata.Key.of("x-entry", Metadata.ASCII_STRING_MARSHALLER), "no");
    assertThatThrownBy(
            () ->
                blocking()
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(refused))
                    .echo(request("hi")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAUTHENTICATED);
              assertThat(e.getStatus().getDescription()).isEqualTo("no entry");
            });
    assertThat(intercepted.get()).isEqualTo(1);
  }

  /**
   * A handler whose answer is known when it returns (Mono.just and the like) is answered without a
   * subscription, with the same outcomes as a subscription: the value, a status, INTERNAL for none.
   */
  @Test
  void anAnswerGivenAtOnce_isTakenByACall_withEachOutcome() {
    io.grpc.MethodDescriptor<EchoRequest, EchoReply> atOnce =
        GrpcServices.toGrpc(ProbeService.AT_ONCE, null);
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
    assertThat(
            ClientCalls.blockingUnaryCall(channel, atOnce, options, request("now"))
                .getPayload()
                .toStringUtf8())
        .isEqualTo("now");
    EchoRequest failing =
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.NOT_FOUND.value())
            .setFailMessage("nowhere")
            .build();
    assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, atOnce, options, failing))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.NOT_FOUND);
              assertThat(e.getStatus().getDescription()).isEqualTo("nowhere");
            });
    EchoRequest none = EchoRequest.newBuilder().setFailWithStatus(-1).build();
    assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, atOnce, options, none))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.INTERNAL));
    assertThat(probe.atOnce).hasSize(3).allSatisfy(a -> assertThat(a.subscriptions()).isZero());
  }

  @Test
  void unknownMethod_isUnimplemented() {
    MethodDescriptor<EchoRequest, EchoReply> missing =
        ProbeService.unary("millrace.echo.v1.EchoService/Nope");
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    GrpcServices.toGrpc(missing, null),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED));
  }

  @Test
  void gzip_requestsAreReadAndAnsweredCompressed() {
    String big = "compressible ".repeat(10_000);
    var responseHeaders = new java.util.concurrent.atomic.AtomicReference<Metadata>();
    EchoReply reply =
        blocking()
            .withCompression("gzip")
            .withInterceptors(
                MetadataUtils.newCaptureMetadataInterceptor(
                    responseHeaders, new java.util.concurrent.atomic.AtomicReference<>()))
            .echo(request(big));
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo(big);
    assertThat(
            responseHeaders
                .get()
                .get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("gzip");
  }

  @Test
  void anOversizedMessage_isResourceExhausted() {
    EchoRequest huge =
        EchoRequest.newBuilder().setPayload(ByteString.copyFrom(new byte[5 << 20])).build();
    assertThatThrownBy(() -> blocking().echo(huge))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED));
  }

  @Test
  void clientStreamingCancel_reachesTheHandler_andEndsItsRequests() throws Exception {
    ClientCall<EchoRequest, EchoReply> call =
        channel.newCall(GrpcServices.toGrpc(ProbeService.DRAIN, null), CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {}, new Metadata());
    for (int i = 0; i < 10; i++) {
      call.sendMessage(request("m"));
    }
    for (int i = 0; i < 500 && probe.drained.get() < 10; i++) {
      Thread.sleep(10);
    }
    assertThat(probe.drained.get()).isEqualTo(10);
    call.cancel("enough", null);
    assertThat(probe.drainCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isEqualTo(Status.Code.CANCELLED);
    assertThat(probe.drainRequestsEnded.get(WAIT_S, TimeUnit.SECONDS))
        .isInstanceOf(io.millrace.rpc.StatusException.class);
  }

  @Test
  void aFailureBeforeAnyMessage_isTrailersOnly_withTheResponseHeaders() {
    var headers = new java.util.concurrent.atomic.AtomicReference<Metadata>();
    var trailers = new java.util.concurrent.atomic.AtomicReference<Metadata>();
    io.grpc.Channel capturing =
        io.grpc.ClientInterceptors.intercept(
            channel, MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    capturing,
                    GrpcServices.toGrpc(ProbeService.REFUSE, null),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE));
    assertThat(trailers.get().get(Metadata.Key.of("x-why", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("closed for lunch");
  }

  @Test
  void healthWatch_followsChanges() throws Exception {
    java.util.concurrent.BlockingQueue<HealthCheckResponse.ServingStatus> seen =
        new java.util.concurrent.LinkedBlockingQueue<>();
    HealthGrpc.newStub(channel)
        .watch(
            HealthCheckRequest.newBuilder().setService(ProbeService.NAME).build(),
            new StreamObserver<>() {
              @Override
              public void onNext(HealthCheckResponse value) {
                seen.add(value.getStatus());
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
    assertThat(seen.poll(WAIT_S, TimeUnit.SECONDS))
        .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    endpoint.health().setStatus(ProbeService.NAME, HealthCheckResponse.ServingStatus.NOT_SERVING);
    assertThat(seen.poll(WAIT_S, TimeUnit.SECONDS))
        .isEqualTo(HealthCheckResponse.ServingStatus.NOT_SERVING);
  }

  @Test
  @SuppressWarnings("deprecation") // v1alpha: what older grpcurl and ghz ask
  void reflectionV1alpha_listsTheServicesToo() throws Exception {
    CompletableFuture<io.grpc.reflection.v1alpha.ServerReflectionResponse> answer =
        new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> ask =
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse value) {
                    answer.complete(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    answer.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {}
                });
    ask.onNext(
        io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
            .setListServices("")
            .build());
    List<String> names = new ArrayList<>();
    answer
        .get(WAIT_S, TimeUnit.SECONDS)
        .getListServicesResponse()
        .getServiceList()
        .forEach(s -> names.add(s.getName()));
    ask.onCompleted();
    assertThat(names).contains("millrace.echo.v1.EchoService");
  }

  @Test
  void health_saysServing_forTheServerAndEachService() {
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
    for (String service : List.of("", "millrace.echo.v1.EchoService", ProbeService.NAME)) {
      assertThat(
              health.check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus())
          .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    }
    endpoint.health().setStatus(ProbeService.NAME, HealthCheckResponse.ServingStatus.NOT_SERVING);
    assertThat(
            health
                .check(HealthCheckRequest.newBuilder().setService(ProbeService.NAME).build())
                .getStatus())
        .isEqualTo(HealthCheckResponse.ServingStatus.NOT_SERVING);
  }

  @Test
  void reflection_listsTheServices_andDescribesThemFromTheirProtoFile() throws Exception {
    List<ServerReflectionResponse> answers = new ArrayList<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> ask =
        ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public synchronized void onNext(ServerReflectionResponse value) {
                    answers.add(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(null);
                  }
                });
    ask.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    ask.onNext(
        ServerReflectionRequest.newBuilder()
            .setFileContainingSymbol("millrace.echo.v1.EchoService")
            .build());
    ask.onCompleted();
    done.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(answers).hasSize(2);
    List<String> names = new ArrayList<>();
    answers.get(0).getListServicesResponse().getServiceList().forEach(s -> names.add(s.getName()));
    // The probe service was built by hand without a schema: reflection cannot describe it.
    assertThat(names)
        .contains(
            "millrace.echo.v1.EchoService",
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection")
        .doesNotContain(ProbeService.NAME);
    List<ByteString> files =
        answers.get(1).getFileDescriptorResponse().getFileDescriptorProtoList();
    assertThat(files).isNotEmpty();
    com.google.protobuf.DescriptorProtos.FileDescriptorProto echoFile =
        com.google.protobuf.DescriptorProtos.FileDescriptorProto.parseFrom(files.get(0));
    assertThat(echoFile.getName()).isEqualTo("millrace/echo/v1/echo.proto");
    assertThat(echoFile.getService(0).getMethodList())
        .extracting(m -> m.getName())
        .containsExactly("Echo", "Count", "Collect", "Chat", "Notify");
  }
}
