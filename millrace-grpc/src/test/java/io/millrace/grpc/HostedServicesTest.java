package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.CallOptions;
import io.millrace.rpc.Headers;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * A grpc-java service, written as grpc-java users write them (its generated ImplBase, its
 * StreamObservers with isReady/onReady flow control and cancel handlers, a ServerInterceptor),
 * hosted on a Millrace server by {@link HostedServices} and called by Millrace's own client, by
 * grpc-java's stubs over a Millrace connection ({@link MillraceChannel}), and by a gRPC client
 * through a {@link GrpcEndpoint}.
 */
class HostedServicesTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  /** EchoService the grpc-java way. */
  static final class GrpcEcho extends EchoServiceGrpc.EchoServiceImplBase {
    final AtomicInteger produced = new AtomicInteger();
    final CompletableFuture<String> hangEnded = new CompletableFuture<>();
    final CountDownLatch hangStarted = new CountDownLatch(1);
    final AtomicInteger notified = new AtomicInteger();
    final CompletableFuture<io.grpc.Status.Code> collectFailed = new CompletableFuture<>();

    @Override
    public void echo(EchoRequest request, StreamObserver<EchoReply> out) {
      if (request.getFailWithStatus() != 0) {
        out.onError(
            io.grpc.Status.fromCodeValue(request.getFailWithStatus())
                .withDescription(request.getFailMessage())
                .asRuntimeException());
        return;
      }
      if (request.getPayload().toStringUtf8().equals("throw")) {
        throw new IllegalStateException("a bug in the service");
      }
      if (request.getPayload().toStringUtf8().equals("sleep")) {
        try {
          Thread.sleep(20); // blocking service code: it belongs on an executor
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (request.getPayload().toStringUtf8().equals("hang")) {
        // Waits for the Context to be cancelled, as grpc-java services check for it.
        Context.current()
            .addListener(
                c ->
                    hangEnded.complete(
                        c.getDeadline() != null && c.getDeadline().isExpired()
                            ? "deadline"
                            : "cancelled"),
                Runnable::run);
        hangStarted.countDown();
        return;
      }
      out.onNext(EchoReply.newBuilder().setPayload(request.getPayload()).build());
      out.onCompleted();
    }

    /** Sends only while the caller can take more: grpc-java's flow-control pattern. */
    @Override
    public void count(CountRequest request, StreamObserver<EchoReply> out) {
      ServerCallStreamObserver<EchoReply> server = (ServerCallStreamObserver<EchoReply>) out;
      int n = request.getN();
      int[] next = {0};
      Runnable send =
          () -> {
            while (server.isReady() && next[0] < n) {
              produced.incrementAndGet();
              server.onNext(EchoReply.newBuilder().setSequence(next[0]++).build());
            }
            if (next[0] == n) {
              next[0]++;
              server.onCompleted();
            }
          };
      server.setOnCancelHandler(() -> hangEnded.complete("count cancelled"));
      server.setOnReadyHandler(send);
    }

    @Override
    public StreamObserver<EchoRequest> collect(StreamObserver<EchoReply> out) {
      return new StreamObserver<>() {
        ByteString all = ByteString.EMPTY;
        long count;

        @Override
        public void onNext(EchoRequest value) {
          all = all.concat(value.getPayload());
          count++;
        }

        @Override
        public void onError(Throwable t) {
          collectFailed.complete(io.grpc.Status.fromThrowable(t).getCode());
        }

        @Override
        public void onCompleted() {
          out.onNext(EchoReply.newBuilder().setPayload(all).setSequence(count).build());
          out.onCompleted();
        }
      };
    }

    @Override
    public StreamObserver<EchoRequest> chat(StreamObserver<EchoReply> out) {
      return new StreamObserver<>() {
        long sequence;

        @Override
        public void onNext(EchoRequest value) {
          out.onNext(
              EchoReply.newBuilder()
                  .setPayload(value.getPayload())
                  .setSequence(sequence++)
                  .build());
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }

    @Override
    public void notify(EchoRequest request, StreamObserver<EchoReply> out) {
      notified.incrementAndGet();
      out.onNext(EchoReply.getDefaultInstance());
      out.onCompleted();
    }
  }

  /** Refuses calls without the password; tells the caller who served it. */
  static final class Auth implements ServerInterceptor {
    static final Metadata.Key<String> PASSWORD =
        Metadata.Key.of("x-password", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> SERVED_BY =
        Metadata.Key.of("x-served-by", Metadata.ASCII_STRING_MARSHALLER);

    /** The last caller's address, as a grpc-java interceptor reads it. */
    static volatile java.net.SocketAddress remote;

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      remote = call.getAttributes().get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
      if (!"open sesame".equals(headers.get(PASSWORD))) {
        call.close(io.grpc.Status.UNAUTHENTICATED.withDescription("who are you?"), new Metadata());
        return new ServerCall.Listener<>() {};
      }
      return next.startCall(
          new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendHeaders(Metadata responseHeaders) {
              responseHeaders.put(SERVED_BY, "grpc-java code");
              super.sendHeaders(responseHeaders);
            }
          },
          headers);
    }
  }

  private final GrpcEcho service = new GrpcEcho();
  private RpcOverTcp tcp;
  private RpcServer rpc;
  private EchoServiceReactor.Client millrace;

  @BeforeEach
  void start() throws Exception {
    rpc = RpcServer.builder().service(HostedServices.of(service, new Auth())).build();
    tcp = RpcOverTcp.serve(rpc);
    millrace = new EchoServiceReactor.Client(tcp.client());
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private static CallOptions withPassword() {
    return CallOptions.DEFAULT
        .withTimeout(WAIT)
        .withHeaders(new Headers().put("x-password", "open sesame"));
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void millraceClient_callsEveryInteraction() {
    AtomicReference<Headers> headers = new AtomicReference<>();
    EchoReply reply =
        millrace.echo(request("hi"), withPassword().onHeaders(headers::set)).block(WAIT);
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo("hi");
    assertThat(headers.get().get("x-served-by")).isEqualTo("grpc-java code");
    assertThat(Auth.remote)
        .isInstanceOfSatisfying(
            java.net.InetSocketAddress.class,
            a -> assertThat(a.getAddress().getHostAddress()).isEqualTo("127.0.0.1"));

    List<Long> counted =
        millrace
            .count(CountRequest.newBuilder().setN(1000).build(), withPassword())
            .map(EchoReply::getSequence)
            .collectList()
            .block(WAIT);
    assertThat(counted).hasSize(1000).startsWith(0L, 1L).endsWith(999L);

    EchoReply collected =
        millrace.collect(Flux.range(0, 100).map(i -> request("c")), withPassword()).block(WAIT);
    assertThat(collected.getSequence()).isEqualTo(100);
    assertThat(collected.getPayload().size()).isEqualTo(100);

    List<String> chatted =
        millrace
            .chat(Flux.range(0, 50).map(i -> request("m" + i)), withPassword())
            .map(r -> r.getSequence() + ":" + r.getPayload().toStringUtf8())
            .collectList()
            .block(WAIT);
    assertThat(chatted).hasSize(50).startsWith("0:m0").endsWith("49:m49");

    millrace.notify(request("n"), withPassword()).block(WAIT);
    for (int i = 0; i < 500 && service.notified.get() == 0; i++) {
      sleep(10);
    }
    assertThat(service.notified.get()).isEqualTo(1);
  }

  @Test
  void theServicesStatus_andItsInterceptor_reachTheMillraceClient() {
    EchoRequest failing =
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.OUT_OF_RANGE.value())
            .setFailMessage("zu weit ✗")
            .build();
    assertThatThrownBy(() -> millrace.echo(failing, withPassword()).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.OUT_OF_RANGE);
              assertThat(e.status().message()).isEqualTo("zu weit ✗");
            });
    assertThatThrownBy(
            () -> millrace.echo(request("hi"), CallOptions.DEFAULT.withTimeout(WAIT)).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
              assertThat(e.status().message()).isEqualTo("who are you?");
            });
  }

  @Test
  void aSlowCaller_holdsTheServiceBack_throughIsReady() {
    // One message at a time, 20 in all, of a million: the service sends only while isReady.
    List<EchoReply> got =
        millrace
            .count(CountRequest.newBuilder().setN(1_000_000).build(), withPassword())
            .limitRate(1)
            .take(20)
            .collectList()
            .block(WAIT);
    assertThat(got).hasSize(20);
    assertThat(service.produced.get()).isLessThan(1_000);
  }

  @Test
  void aServiceThatThrows_failsTheCallUnknown_insteadOfHangingIt() {
    assertThatThrownBy(() -> millrace.echo(request("throw"), withPassword()).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.UNKNOWN));
    // The call after it is served as usual.
    assertThat(millrace.echo(request("ok"), withPassword()).block(WAIT).getPayload().toStringUtf8())
        .isEqualTo("ok");
  }

  @Test
  void cancellingAClientStream_tellsTheService() throws Exception {
    var subscription =
        millrace
            .collect(
                Flux.range(0, 1_000_000).map(i -> request("c")).delayElements(Duration.ofMillis(1)),
                withPassword())
            .subscribe();
    sleep(100);
    subscription.dispose();
    assertThat(service.collectFailed.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isEqualTo(io.grpc.Status.Code.CANCELLED);
  }

  @Test
  void blockingServiceCode_runsOnTheExecutorGiven_notOnTheEventLoop() throws Exception {
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try (RpcOverTcp other =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(HostedServices.of(pool, new GrpcEcho(), new Auth()))
                .build())) {
      EchoServiceReactor.Client client = new EchoServiceReactor.Client(other.client());
      // Thread.sleep in the service: on the event loop the loop-blocking check would fail this.
      List<String> replies =
          Flux.range(0, 20)
              .flatMap(i -> client.echo(request("sleep"), withPassword()))
              .map(r -> r.getPayload().toStringUtf8())
              .collectList()
              .block(WAIT);
      assertThat(replies).hasSize(20).containsOnly("sleep");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theDeadline_cancelsTheServicesContext() throws Exception {
    assertThatThrownBy(
            () ->
                millrace
                    .echo(request("hang"), withPassword().withTimeout(Duration.ofMillis(200)))
                    .block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(service.hangEnded.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isIn("deadline", "cancelled");
  }

  @Test
  void cancellingTheCall_runsTheServicesCancelHandler() throws Exception {
    var subscription =
        millrace
            .count(CountRequest.newBuilder().setN(1_000_000).build(), withPassword())
            .limitRate(1)
            .subscribe();
    for (int i = 0; i < 500 && service.produced.get() == 0; i++) {
      sleep(10);
    }
    subscription.dispose();
    assertThat(service.hangEnded.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isEqualTo("count cancelled");
  }

  @Test
  void grpcJavaStubs_overAMillraceConnection_reachTheHostedService() throws Exception {
    io.grpc.Channel channel =
        io.grpc.ClientInterceptors.intercept(
            MillraceChannel.of(tcp.client()),
            io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(password()));
    EchoServiceGrpc.EchoServiceBlockingStub stub =
        EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    assertThat(stub.echo(request("both ways")).getPayload().toStringUtf8()).isEqualTo("both ways");
    var replies = stub.count(CountRequest.newBuilder().setN(100).build());
    int n = 0;
    while (replies.hasNext()) {
      assertThat(replies.next().getSequence()).isEqualTo(n++);
    }
    assertThat(n).isEqualTo(100);
  }

  @Test
  void aGrpcClient_throughTheEndpoint_reachesTheHostedService() throws Exception {
    try (GrpcEndpoint endpoint =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start()) {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
      try {
        EchoServiceGrpc.EchoServiceBlockingStub stub =
            EchoServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .withInterceptors(
                    io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(password()));
        assertThat(stub.echo(request("three hops")).getPayload().toStringUtf8())
            .isEqualTo("three hops");
        assertThatThrownBy(
                () ->
                    EchoServiceGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .echo(request("no password")))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e ->
                    assertThat(e.getStatus().getCode())
                        .isEqualTo(io.grpc.Status.Code.UNAUTHENTICATED));
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  private static Metadata password() {
    Metadata m = new Metadata();
    m.put(Auth.PASSWORD, "open sesame");
    return m;
  }

  /**
   * A service answering on a thread of its own (an asynchronous service, or one on an executor),
   * with an interceptor that adds trailers in {@code close}, as request-id and timing interceptors
   * do.
   */
  static final class LateAnswers extends EchoServiceGrpc.EchoServiceImplBase {
    final CompletableFuture<String> countEnd = new CompletableFuture<>();

    @Override
    public void echo(EchoRequest request, StreamObserver<EchoReply> out) {
      new Thread(
              () -> {
                out.onNext(EchoReply.newBuilder().setPayload(request.getPayload()).build());
                sleep(100); // the caller's demand is there: the response could go at once
                if (request.getPayload().toStringUtf8().equals("then fail")) {
                  out.onError(io.grpc.Status.PERMISSION_DENIED.asRuntimeException());
                } else {
                  out.onCompleted();
                }
              })
          .start();
    }

    /** n replies sent regardless of readiness, then the end. */
    @Override
    public void count(CountRequest request, StreamObserver<EchoReply> out) {
      ServerCallStreamObserver<EchoReply> server = (ServerCallStreamObserver<EchoReply>) out;
      server.setOnCancelHandler(() -> countEnd.complete("onCancel"));
      server.setOnCloseHandler(() -> countEnd.complete("onComplete"));
      for (int i = 0; i < request.getN(); i++) {
        server.onNext(EchoReply.newBuilder().setSequence(i).build());
      }
      server.onCompleted();
    }
  }

  static final Metadata.Key<String> REQUEST_ID =
      Metadata.Key.of("x-request-id", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> NOTE =
      Metadata.Key.of("x-note", Metadata.ASCII_STRING_MARSHALLER);

  /** Adds trailers in close: a valid one and one with a tab, which grpc-java would pass on. */
  static final class TrailersInClose implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      return next.startCall(
          new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(io.grpc.Status status, Metadata trailers) {
              trailers.put(REQUEST_ID, "r-42");
              trailers.put(NOTE, "line one\tline two");
              super.close(status, trailers);
            }
          },
          headers);
    }
  }

  @Test
  void aUnaryResponse_goesWithTheClose_itsTrailersArrive_andAnErrorAfterItWins() throws Exception {
    LateAnswers late = new LateAnswers();
    try (RpcOverTcp other =
        RpcOverTcp.serve(
            RpcServer.builder().service(HostedServices.of(late, new TrailersInClose())).build())) {
      EchoServiceReactor.Client client = new EchoServiceReactor.Client(other.client());
      AtomicReference<Headers> trailers = new AtomicReference<>();
      EchoReply reply =
          client
              .echo(request("hi"), CallOptions.DEFAULT.withTimeout(WAIT).onTrailers(trailers::set))
              .block(WAIT);
      assertThat(reply.getPayload().toStringUtf8()).isEqualTo("hi");
      assertThat(trailers.get()).as("the trailers the close added").isNotNull();
      assertThat(trailers.get().get("x-request-id")).isEqualTo("r-42");
      assertThat(trailers.get().get("x-note")).as("not a valid header: left out").isNull();

      assertThatThrownBy(
              () ->
                  client
                      .echo(request("then fail"), CallOptions.DEFAULT.withTimeout(WAIT))
                      .block(WAIT))
          .isInstanceOfSatisfying(
              StatusException.class,
              e -> assertThat(e.status().code()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }
  }

  /** A unary method answered twice, or not at all. */
  static final class WrongCounts extends EchoServiceGrpc.EchoServiceImplBase {
    final java.util.concurrent.BlockingQueue<String> ends =
        new java.util.concurrent.LinkedBlockingQueue<>();

    @Override
    public void echo(EchoRequest request, StreamObserver<EchoReply> out) {
      ServerCallStreamObserver<EchoReply> server = (ServerCallStreamObserver<EchoReply>) out;
      server.setOnCancelHandler(() -> ends.add("onCancel"));
      server.setOnCloseHandler(() -> ends.add("onComplete"));
      if (request.getPayload().toStringUtf8().equals("twice")) {
        server.onNext(EchoReply.getDefaultInstance());
        server.onNext(EchoReply.getDefaultInstance());
      }
      server.onCompleted();
    }
  }

  @Test
  void aUnaryMethodAnsweredTwiceOrNever_failsInternal_asUnderGrpcJava() throws Exception {
    WrongCounts wrong = new WrongCounts();
    try (RpcOverTcp other =
        RpcOverTcp.serve(RpcServer.builder().service(HostedServices.of(wrong)).build())) {
      EchoServiceReactor.Client client = new EchoServiceReactor.Client(other.client());
      for (String payload : List.of("twice", "none")) {
        assertThatThrownBy(
                () ->
                    client
                        .echo(request(payload), CallOptions.DEFAULT.withTimeout(WAIT))
                        .block(WAIT))
            .as(payload)
            .isInstanceOfSatisfying(
                StatusException.class,
                e -> {
                  assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL);
                  assertThat(e.status().message())
                      .isEqualTo(
                          payload.equals("twice")
                              ? "Too many responses"
                              : "Completed without a response");
                });
        assertThat(wrong.ends.poll(10, TimeUnit.SECONDS)).as(payload).isEqualTo("onCancel");
      }
    }
  }

  @Test
  void theServiceHearsOnComplete_onlyOnceItsEndHasGone_andOnCancelIfTheCallerCancelsFirst()
      throws Exception {
    LateAnswers late = new LateAnswers();
    try (RpcOverTcp other =
        RpcOverTcp.serve(RpcServer.builder().service(HostedServices.of(late)).build())) {
      EchoServiceReactor.Client client = new EchoServiceReactor.Client(other.client());
      reactor.core.publisher.BaseSubscriber<EchoReply> idle =
          new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              s.request(1); // the replies beyond the client's prefetch, and the end, wait
            }
          };
      client
          .count(CountRequest.newBuilder().setN(10_000).build(), CallOptions.DEFAULT)
          .subscribe(idle);
      sleep(300);
      assertThat(late.countEnd).as("the end has not gone to the caller").isNotDone();
      idle.cancel();
      assertThat(late.countEnd.get(10, TimeUnit.SECONDS)).isEqualTo("onCancel");
    }
    LateAnswers again = new LateAnswers();
    try (RpcOverTcp other =
        RpcOverTcp.serve(RpcServer.builder().service(HostedServices.of(again)).build())) {
      EchoServiceReactor.Client client = new EchoServiceReactor.Client(other.client());
      assertThat(
              client
                  .count(CountRequest.newBuilder().setN(1).build(), CallOptions.DEFAULT)
                  .count()
                  .block(WAIT))
          .isEqualTo(1);
      assertThat(again.countEnd.get(10, TimeUnit.SECONDS)).isEqualTo("onComplete");
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
