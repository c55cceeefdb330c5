package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.Status;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * grpc-java's generated stubs (blocking, async, future) and its ClientCalls calling Millrace
 * services through {@link MillraceChannel}, a Millrace connection: every interaction, statuses,
 * metadata both ways, ClientInterceptors, deadlines, and cancellation by the call and by the
 * io.grpc.Context reaching the handler.
 */
class MillraceChannelTest {
  private static final long WAIT_S = 10;

  private final EchoServiceImpl echo = new EchoServiceImpl();
  private final ProbeService probe = new ProbeService();
  private RpcOverTcp tcp;
  private Channel channel;

  @BeforeEach
  void start() throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(EchoServiceReactor.bind(echo))
                .service(probe.definition())
                .build());
    channel = MillraceChannel.of(tcp.client());
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private EchoServiceGrpc.EchoServiceBlockingStub blocking() {
    return EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  private static <Req, Resp> MethodDescriptor<Req, Resp> grpc(
      io.millrace.rpc.MethodDescriptor<Req, Resp> m) {
    return GrpcServices.toGrpc(m, null);
  }

  @Test
  void blockingStub_unary_andItsFailures() {
    assertThat(blocking().echo(request("hi")).getPayload().toStringUtf8()).isEqualTo("hi");
    EchoRequest failing =
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.NOT_FOUND.value())
            .setFailMessage("kein Echo ✗")
            .build();
    assertThatThrownBy(() -> blocking().echo(failing))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.NOT_FOUND);
              assertThat(e.getStatus().getDescription()).isEqualTo("kein Echo ✗");
            });
  }

  @Test
  void blockingStub_serverStreaming_inOrder() {
    Iterator<EchoReply> replies = blocking().count(CountRequest.newBuilder().setN(3000).build());
    long expected = 0;
    while (replies.hasNext()) {
      assertThat(replies.next().getSequence()).isEqualTo(expected++);
    }
    assertThat(expected).isEqualTo(3000);
  }

  @Test
  void aFireAndForgetMethod_calledAsUnaryByTheStub_runsAndAnswersTheEmptyMessage() {
    assertThat(blocking().notify(request("n"))).isEqualTo(EchoReply.getDefaultInstance());
    assertThat(echo.notified()).isEqualTo(1);
  }

  @Test
  void futureStub_unary() throws Exception {
    ListenableFuture<EchoReply> reply =
        EchoServiceGrpc.newFutureStub(channel).echo(request("future"));
    assertThat(reply.get(WAIT_S, TimeUnit.SECONDS).getPayload().toStringUtf8()).isEqualTo("future");
  }

  @Test
  void asyncStub_clientStreaming_andBidi() throws Exception {
    EchoServiceGrpc.EchoServiceStub async =
        EchoServiceGrpc.newStub(channel).withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
    CompletableFuture<EchoReply> collected = new CompletableFuture<>();
    StreamObserver<EchoRequest> collect = async.collect(observer(new ArrayList<>(), collected));
    for (int i = 0; i < 10_000; i++) {
      collect.onNext(request(i % 10 == 0 ? "x" : ""));
    }
    collect.onCompleted();
    EchoReply reply = collected.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(reply.getSequence()).isEqualTo(10_000);
    assertThat(reply.getPayload().size()).isEqualTo(1_000);

    List<EchoReply> chatted = new ArrayList<>();
    CompletableFuture<EchoReply> chatDone = new CompletableFuture<>();
    StreamObserver<EchoRequest> chat = async.chat(observer(chatted, chatDone));
    for (int i = 0; i < 200; i++) {
      chat.onNext(request("c" + i));
    }
    chat.onCompleted();
    chatDone.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(chatted).hasSize(200);
    for (int i = 0; i < 200; i++) {
      assertThat(chatted.get(i).getSequence()).isEqualTo(i);
      assertThat(chatted.get(i).getPayload().toStringUtf8()).isEqualTo("c" + i);
    }
  }

  @Test
  void bidi_failureMidStream_endsTheCallWithItsStatus() throws Exception {
    CompletableFuture<EchoReply> done = new CompletableFuture<>();
    List<EchoReply> got = new ArrayList<>();
    StreamObserver<EchoRequest> chat = EchoServiceGrpc.newStub(channel).chat(observer(got, done));
    chat.onNext(request("a"));
    chat.onNext(
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.ABORTED.value())
            .setFailMessage("stop")
            .build());
    assertThatThrownBy(() -> done.get(WAIT_S, TimeUnit.SECONDS))
        .hasCauseInstanceOf(StatusRuntimeException.class)
        .cause()
        .satisfies(
            e ->
                assertThat(((StatusRuntimeException) e).getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.ABORTED));
    assertThat(got).hasSize(1);
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

  @Test
  void metadata_bothWays_throughClientInterceptors() {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("x-token", Metadata.ASCII_STRING_MARSHALLER), "t0k3n");
    headers.put(Metadata.Key.of("x-blob-bin", Metadata.BINARY_BYTE_MARSHALLER), new byte[5]);
    AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    Channel intercepted =
        ClientInterceptors.intercept(
            channel,
            MetadataUtils.newAttachHeadersInterceptor(headers),
            MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers));
    EchoReply reply =
        ClientCalls.blockingUnaryCall(
            intercepted,
            grpc(ProbeService.HEADERS),
            CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
            request(""));
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo("t0k3n/5/127.0.0.1");
    assertThat(
            responseHeaders
                .get()
                .get(Metadata.Key.of("x-served-by", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("millrace");
    assertThat(
            trailers.get().get(Metadata.Key.of("x-trailer-bin", Metadata.BINARY_BYTE_MARSHALLER)))
        .containsExactly(0, 1, 0xFF);
  }

  /**
   * Response headers set by a handler that then fails before any message come, as from grpc-java's
   * server, in the trailers of a trailers-only answer: no onHeaders, the entries in onClose's
   * trailers (so {@code StatusRuntimeException.getTrailers()} finds them).
   */
  @Test
  void aFailureBeforeAnyMessage_isTrailersOnly_withTheResponseHeaders() {
    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    Channel capturing =
        ClientInterceptors.intercept(
            channel, MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    capturing,
                    grpc(ProbeService.REFUSE),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
              assertThat(
                      e.getTrailers()
                          .get(Metadata.Key.of("x-why", Metadata.ASCII_STRING_MARSHALLER)))
                  .isEqualTo("closed for lunch");
            });
    assertThat(headers.get()).as("onHeaders").isNull();
    assertThat(trailers.get().get(Metadata.Key.of("x-why", Metadata.ASCII_STRING_MARSHALLER)))
        .isEqualTo("closed for lunch");
  }

  @Test
  void aClientInterceptor_seesEveryCallAndItsClose() {
    List<String> seen = new ArrayList<>();
    ClientInterceptor logging =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                next.newCall(method, options)) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                seen.add("start " + method.getBareMethodName());
                super.start(
                    new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                        listener) {
                      @Override
                      public void onClose(io.grpc.Status status, Metadata trailers) {
                        seen.add("close " + status.getCode());
                        super.onClose(status, trailers);
                      }
                    },
                    headers);
              }
            };
          }
        };
    EchoServiceGrpc.EchoServiceBlockingStub stub = blocking().withInterceptors(logging);
    stub.echo(request("a"));
    assertThatThrownBy(
            () ->
                stub.echo(
                    EchoRequest.newBuilder()
                        .setFailWithStatus(Status.Code.UNAVAILABLE.value())
                        .build()))
        .isInstanceOf(StatusRuntimeException.class);
    assertThat(seen).containsExactly("start Echo", "close OK", "start Echo", "close UNAVAILABLE");
  }

  @Test
  void statusDetails_reachTheClient() {
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    grpc(ProbeService.DETAILS),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              com.google.rpc.Status details = io.grpc.protobuf.StatusProto.fromThrowable(e);
              assertThat(details).isNotNull();
              assertThat(details.getDetails(0).getTypeUrl()).endsWith("google.rpc.ErrorInfo");
            });
  }

  @Test
  void deadline_failsTheCall_andCancelsTheHandler() throws Exception {
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    grpc(ProbeService.HANG),
                    CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED));
    // The client's timer and the server's race (the server's deadline starts when the call
    // arrives): the handler is stopped either by its own deadline or by the client's cancel.
    assertThat(probe.hangCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
  }

  @Test
  void cancellingTheCall_reachesTheHandler_andClosesWithCancelled() throws Exception {
    ClientCall<EchoRequest, EchoReply> call =
        channel.newCall(grpc(ProbeService.HANG), CallOptions.DEFAULT);
    CompletableFuture<io.grpc.Status> closed = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(io.grpc.Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.request(1);
    call.sendMessage(request(""));
    call.halfClose();
    assertThat(probe.hangStarted.await(WAIT_S, TimeUnit.SECONDS)).isTrue();
    call.cancel("not needed any more", null);
    assertThat(closed.get(WAIT_S, TimeUnit.SECONDS).getCode())
        .isEqualTo(io.grpc.Status.Code.CANCELLED);
    assertThat(probe.hangCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isEqualTo(Status.Code.CANCELLED);
  }

  @Test
  void cancellingTheContext_cancelsTheCall() throws Exception {
    Context.CancellableContext context = Context.current().withCancellation();
    CompletableFuture<EchoReply> reply = new CompletableFuture<>();
    context.run(
        () ->
            ClientCalls.asyncUnaryCall(
                channel.newCall(grpc(ProbeService.HANG), CallOptions.DEFAULT),
                request(""),
                observer(new ArrayList<>(), reply)));
    assertThat(probe.hangStarted.await(WAIT_S, TimeUnit.SECONDS)).isTrue();
    context.cancel(null);
    assertThatThrownBy(() -> reply.get(WAIT_S, TimeUnit.SECONDS))
        .cause()
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.CANCELLED));
    assertThat(probe.hangCancelled.get(WAIT_S, TimeUnit.SECONDS).code())
        .isEqualTo(Status.Code.CANCELLED);
  }

  @Test
  void aClientThatSendsOnlyWhenReady_isPacedByTheServersCredit() throws Exception {
    CompletableFuture<EchoReply> done = new CompletableFuture<>();
    int total = 20_000;
    EchoServiceGrpc.newStub(channel)
        .collect(
            new io.grpc.stub.ClientResponseObserver<EchoRequest, EchoReply>() {
              private int sent;
              private EchoReply reply;

              @Override
              public void beforeStart(io.grpc.stub.ClientCallStreamObserver<EchoRequest> call) {
                call.setOnReadyHandler(
                    () -> {
                      while (call.isReady() && sent < total) {
                        call.onNext(request("x"));
                        sent++;
                      }
                      if (sent == total) {
                        sent++;
                        call.onCompleted();
                      }
                    });
              }

              @Override
              public void onNext(EchoReply value) {
                reply = value;
              }

              @Override
              public void onError(Throwable t) {
                done.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {
                done.complete(reply);
              }
            });
    EchoReply reply = done.get(WAIT_S, TimeUnit.SECONDS);
    assertThat(reply.getSequence()).isEqualTo(total);
    assertThat(reply.getPayload().size()).isEqualTo(total);
  }

  @Test
  void aContextDeadline_failsTheCall() {
    Context.CancellableContext context =
        Context.current()
            .withDeadlineAfter(
                200,
                TimeUnit.MILLISECONDS,
                java.util.concurrent.Executors.newScheduledThreadPool(1));
    try {
      assertThatThrownBy(
              () ->
                  context.call(
                      () ->
                          ClientCalls.blockingUnaryCall(
                              channel, grpc(ProbeService.HANG), CallOptions.DEFAULT, request(""))))
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e ->
                  assertThat(e.getStatus().getCode())
                      .isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED));
    } finally {
      context.cancel(null);
    }
  }

  @Test
  void aDeadline_failsAUnaryCallThatNeverSendsItsRequest() throws Exception {
    ClientCall<EchoRequest, EchoReply> call =
        channel.newCall(
            grpc(ProbeService.HEADERS),
            CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS));
    CompletableFuture<io.grpc.Status> closed = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(io.grpc.Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.request(1); // and never a message nor halfClose
    assertThat(closed.get(WAIT_S, TimeUnit.SECONDS).getCode())
        .isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED);
  }

  @Test
  void callCredentials_areRefused_notSilentlyDropped() {
    io.grpc.CallCredentials credentials =
        new io.grpc.CallCredentials() {
          @Override
          public void applyRequestMetadata(
              RequestInfo info, java.util.concurrent.Executor executor, MetadataApplier applier) {
            applier.apply(new Metadata());
          }
        };
    assertThatThrownBy(() -> blocking().withCallCredentials(credentials).echo(request("x")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED));
  }

  @Test
  void anUnknownMethod_isUnimplemented() {
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    grpc(ProbeService.unary("millrace.test.Probe/Nope")),
                    CallOptions.DEFAULT.withDeadlineAfter(WAIT_S, TimeUnit.SECONDS),
                    request("")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED));
  }
}
