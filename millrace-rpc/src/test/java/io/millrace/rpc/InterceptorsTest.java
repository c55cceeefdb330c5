package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Authentication, logging and credentials written as interceptors, over TCP. */
class InterceptorsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<String> serverLog = new CopyOnWriteArrayList<>();
  private final List<String> clientLog = new CopyOnWriteArrayList<>();
  private RpcOverTcp tcp;
  private RpcClient rpc;

  /** Refuses calls without the token; runs first. */
  private final ServerInterceptor auth =
      new ServerInterceptor() {
        @Override
        public void onCall(ServerContext call) {
          if (!"Bearer good".equals(call.requestHeaders().get("authorization"))) {
            throw Status.of(Status.Code.UNAUTHENTICATED).withMessage("who are you").asException();
          }
        }
      };

  /** Logs each call's method and how it ended. */
  private final ServerInterceptor logging =
      new ServerInterceptor() {
        @Override
        public void onCall(ServerContext call) {
          call.responseHeaders().put("x-logged", "yes");
        }

        @Override
        public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
          String name = call.method().fullName();
          return Flux.from(responses)
              .doOnComplete(() -> serverLog.add(name + " OK"))
              .doOnError(e -> serverLog.add(name + " " + Status.fromThrowable(e).code()));
        }
      };

  @BeforeEach
  void start() throws Exception {
    RpcServer rpcServer =
        RpcServer.builder()
            .service(new TestService().definition())
            .interceptor(auth)
            .interceptor(logging)
            .build();
    tcp = RpcOverTcp.serve(rpcServer);
    rpc = tcp.client();
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  /** Adds the token to every call and records what came back. */
  private final ClientInterceptor credentials =
      new ClientInterceptor() {
        @Override
        public CallOptions onCall(MethodDescriptor<?, ?> method, CallOptions options) {
          return options.withHeaders(new Headers().put("authorization", "Bearer good"));
        }

        @Override
        public <T> Publisher<T> onResponses(
            MethodDescriptor<?, ?> method, CallOptions options, Publisher<T> responses) {
          return Flux.from(responses).doOnNext(r -> clientLog.add(method.fullName() + " " + r));
        }
      };

  /**
   * {@code handlers} with a thread started. A call waits for a handler thread before its method
   * runs, and one that waited past its deadline is not run at all (QueuedHandlersTest): the tests
   * whose method must run before its deadline give it a thread at once and half a second (a 100 ms
   * deadline once passed before a new thread ran the method on a loaded CI machine).
   */
  private static java.util.concurrent.ExecutorService started(
      java.util.concurrent.ExecutorService handlers) throws Exception {
    handlers.submit(() -> {}).get(10, java.util.concurrent.TimeUnit.SECONDS);
    return handlers;
  }

  @Test
  void aCallWhoseDeadlinePassesWhileAnInterceptorRuns_isSeenToEndByTheInterceptorsWrapper()
      throws Exception {
    java.util.concurrent.ExecutorService handlers =
        started(Blocking.newHandlerExecutor("slow-check"));
    java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
    List<String> seen = new CopyOnWriteArrayList<>();
    ServerInterceptor slowCheckAndMetrics =
        new ServerInterceptor() {
          @Override
          public void onCall(ServerContext call) {
            try {
              Thread.sleep(2_000); // a slow lookup, on the handler executor, past the deadline
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
            return Flux.from(responses)
                .doFinally(
                    signal -> {
                      seen.add(signal.toString());
                      ended.countDown();
                    });
          }
        };
    RpcOverTcp slow =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(new TestService().definition())
                .interceptor(slowCheckAndMetrics)
                .streamsOptions(
                    io.millrace.streams.StreamsOptions.builder().handlerExecutor(handlers).build())
                .build());
    try {
      Throwable t =
          Mono.from(
                  slow.client()
                      .unary(
                          TestService.ECHO,
                          text("hi"),
                          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))))
              .materialize()
              .block(WAIT)
              .getThrowable();
      assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(ended.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(seen).containsExactly("cancel");
    } finally {
      slow.close();
      handlers.shutdownNow();
    }
  }

  @Test
  void aDeadlineThatPassesWhileTheHandlersMethodRuns_cancelsItsContextThen() throws Exception {
    java.util.concurrent.ExecutorService handlers =
        started(Blocking.newHandlerExecutor("slow-method"));
    java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicLong cancelledAfterMillis =
        new java.util.concurrent.atomic.AtomicLong(-1);
    java.util.concurrent.atomic.AtomicBoolean sawItCancelled =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
    ServiceDefinition slowQuery =
        ServiceDefinition.builder(TestService.NAME)
            .method(
                TestService.ECHO,
                (request, context) -> {
                  long start = System.nanoTime();
                  context.onCancel(
                      () -> {
                        cancelledAfterMillis.set((System.nanoTime() - start) / 1_000_000);
                        cancelled.countDown();
                      });
                  long until = System.nanoTime() + 20_000_000_000L; // a slow query in the method
                  while (!context.isCancelled() && System.nanoTime() < until) {
                    try {
                      Thread.sleep(5);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }
                  sawItCancelled.set(context.isCancelled());
                  returned.countDown();
                  return Mono.just(request);
                })
            .build();
    RpcOverTcp slow =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(slowQuery)
                .streamsOptions(
                    io.millrace.streams.StreamsOptions.builder().handlerExecutor(handlers).build())
                .build());
    try {
      Throwable t =
          Mono.from(
                  slow.client()
                      .unary(
                          TestService.ECHO,
                          text("hi"),
                          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))))
              .materialize()
              .block(WAIT)
              .getThrowable();
      assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(cancelled.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(cancelledAfterMillis.get())
          .as("cancelled at the deadline, not when the 20 s method returned")
          .isLessThan(10_000);
      assertThat(returned.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(sawItCancelled).as("the method's loop saw the cancel").isTrue();
    } finally {
      slow.close();
      handlers.shutdownNow();
    }
  }

  @Test
  void aMethodOnTheExecutorThatReturnedBeforeTheDeadline_isEndedByItThen_andOnlyIfItIsStillOpen()
      throws Exception {
    java.util.concurrent.ExecutorService handlers =
        started(Blocking.newHandlerExecutor("quick-method"));
    java.util.List<Status> cancellations = new java.util.concurrent.CopyOnWriteArrayList<>();
    ServiceDefinition service =
        ServiceDefinition.builder(TestService.NAME)
            .method(
                TestService.ECHO,
                (request, context) -> {
                  context.onCancel(() -> cancellations.add(context.cancellation()));
                  // Returns at once: an answer that never comes, or one that is there.
                  return request.getValue().equals("never") ? Mono.never() : Mono.just(request);
                })
            .build();
    RpcOverTcp server =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(service)
                .streamsOptions(
                    io.millrace.streams.StreamsOptions.builder().handlerExecutor(handlers).build())
                .build());
    try {
      // A caller that leaves the deadline to the server (500 ms in the call header, no timer of
      // its own, no CANCEL): only the server's timer can end the call.
      io.millrace.streams.ReactiveRequester raw = server.connect(RpcServer.METADATA_MIME_TYPE);
      Status never = rawStatus(raw, "never", 500_000);
      assertThat(never.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(never.message()).contains("on the server");
      long until = System.nanoTime() + 10_000_000_000L;
      while (cancellations.isEmpty() && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      assertThat(cancellations)
          .extracting(Status::code)
          .containsExactly(Status.Code.DEADLINE_EXCEEDED);
      cancellations.clear();
      // Answered before its deadline: the deadline that passes afterwards cancels nothing.
      assertThat(rawStatus(raw, "there", 500_000).code()).isEqualTo(Status.Code.OK);
      Thread.sleep(800);
      assertThat(cancellations).isEmpty();
    } finally {
      server.close();
      handlers.shutdownNow();
    }
  }

  /** Calls ECHO with {@code text} as a raw caller whose header carries the timeout; the status. */
  private static Status rawStatus(
      io.millrace.streams.ReactiveRequester raw, String text, long timeoutMicros) {
    io.netty.buffer.ByteBuf header = io.netty.buffer.Unpooled.buffer();
    CallHeader.encode(header, TestService.ECHO.id(), null, timeoutMicros, Headers.EMPTY);
    io.netty.buffer.ByteBuf data = io.netty.buffer.Unpooled.wrappedBuffer(text(text).toByteArray());
    io.millrace.streams.Payload reply =
        Mono.from(raw.requestResponse(io.millrace.streams.Payload.of(header, data))).block(WAIT);
    try {
      io.netty.buffer.ByteBuf m = reply.metadata();
      if (m == null || !m.isReadable()) {
        return Status.OK; // an answer without a trailer
      }
      return ResponseMetadata.decode(m, RpcServer.DEFAULT_MAX_HEADER_BYTES).status();
    } finally {
      reply.release();
    }
  }

  @Test
  void aCancelThatComesWhileTheHandlersMethodRuns_cancelsItsContextThen() throws Exception {
    java.util.concurrent.ExecutorService handlers =
        started(Blocking.newHandlerExecutor("slow-method"));
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<Status> cancelledWith =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean returnedFirst =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
    ServiceDefinition slowQuery =
        ServiceDefinition.builder(TestService.NAME)
            .method(
                TestService.ECHO,
                (request, context) -> {
                  context.onCancel(
                      () -> {
                        cancelledWith.set(context.cancellation());
                        cancelled.countDown();
                      });
                  running.countDown();
                  try { // a slow query in the method, which its cancel hook would stop
                    returnedFirst.set(!cancelled.await(5, java.util.concurrent.TimeUnit.SECONDS));
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  returned.countDown();
                  return Mono.just(request);
                })
            .build();
    RpcOverTcp slow =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(slowQuery)
                .streamsOptions(
                    io.millrace.streams.StreamsOptions.builder().handlerExecutor(handlers).build())
                .build());
    try {
      reactor.core.Disposable call =
          Mono.from(slow.client().unary(TestService.ECHO, text("hi"), CallOptions.DEFAULT))
              .subscribe(r -> {}, e -> {});
      assertThat(running.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      call.dispose(); // the caller gives up: CANCEL
      assertThat(cancelled.await(10, java.util.concurrent.TimeUnit.SECONDS))
          .as("the method's context hears the cancel while the method runs")
          .isTrue();
      assertThat(cancelledWith.get().code()).isEqualTo(Status.Code.CANCELLED);
      assertThat(returned.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(returnedFirst).as("cancelled before the method returned").isFalse();
    } finally {
      slow.close();
      handlers.shutdownNow();
    }
  }

  @Test
  void aCallWithoutCredentials_isRefused_andTheHandlerDoesNotRun() {
    Throwable t =
        Mono.from(rpc.unary(TestService.ECHO, text("slow"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(((StatusException) t).status().message()).isEqualTo("who are you");
    assertThat(serverLog).as("the logging interceptor runs inside auth").isEmpty();
  }

  @Test
  void aClientInterceptor_addsCredentials_andSeesTheResponses() {
    RpcClient withCredentials = rpc.withInterceptors(credentials);
    java.util.concurrent.atomic.AtomicReference<Headers> headers =
        new java.util.concurrent.atomic.AtomicReference<>();
    StringValue reply =
        Mono.from(
                withCredentials.unary(
                    TestService.ECHO, text("hi"), CallOptions.DEFAULT.onHeaders(headers::set)))
            .block(WAIT);
    assertThat(reply).isEqualTo(text("hi"));
    assertThat(headers.get().get("x-logged")).isEqualTo("yes");
    assertThat(serverLog).containsExactly(TestService.NAME + "/Echo OK");
    assertThat(clientLog).hasSize(1).first().asString().startsWith(TestService.NAME + "/Echo");
    Throwable failed =
        Mono.from(withCredentials.unary(TestService.ECHO, text("fail:x"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(((StatusException) failed).status().code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(serverLog).endsWith(TestService.NAME + "/Echo NOT_FOUND");
  }

  @Test
  void aClientInterceptorThatRefuses_failsTheCallWithoutSendingIt() {
    RpcClient refusing =
        rpc.withInterceptors(
            new ClientInterceptor() {
              @Override
              public CallOptions onCall(MethodDescriptor<?, ?> method, CallOptions options) {
                throw Status.of(Status.Code.FAILED_PRECONDITION)
                    .withMessage("offline")
                    .asException();
              }
            });
    Throwable t =
        Flux.from(
                refusing.serverStreaming(
                    TestService.COUNT, TestService.number(3), CallOptions.DEFAULT))
            .materialize()
            .blockLast(WAIT)
            .getThrowable();
    assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(serverLog).isEmpty();
  }

  @Test
  void clientInterceptors_runForEachSubscription_eachACallOfItsOwn() {
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    RpcClient counting =
        rpc.withInterceptors(
            credentials,
            new ClientInterceptor() {
              @Override
              public CallOptions onCall(MethodDescriptor<?, ?> method, CallOptions options) {
                calls.incrementAndGet();
                return options;
              }
            });
    Mono<StringValue> call =
        Mono.from(counting.unary(TestService.ECHO, text("x"), CallOptions.DEFAULT));
    assertThat(calls.get()).as("nothing runs before a subscription").isZero();
    call.block(WAIT);
    call.block(WAIT);
    assertThat(calls.get()).isEqualTo(2);
    assertThat(serverLog).hasSize(2);
  }

  @Test
  void anInterceptorOutsideTheOneThatRefuses_seesTheRefusal() throws Exception {
    try (RpcOverTcp other =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(new TestService().definition())
                .interceptor(logging) // outside: sees every outcome
                .interceptor(auth)
                .build())) {
      Throwable t =
          Mono.from(other.client().unary(TestService.ECHO, text("x"), CallOptions.DEFAULT))
              .materialize()
              .block(WAIT)
              .getThrowable();
      assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
      assertThat(serverLog).containsExactly(TestService.NAME + "/Echo UNAUTHENTICATED");
    }
  }

  @Test
  void anInterceptorWhoseOnResponsesThrows_failsTheCall_innerOnesSeeACancel() throws Exception {
    List<String> inner = new CopyOnWriteArrayList<>();
    ServerInterceptor watching =
        new ServerInterceptor() {
          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> r) {
            return Flux.from(r)
                .doOnCancel(() -> inner.add("cancelled"))
                .doOnComplete(() -> inner.add("completed"));
          }
        };
    ServerInterceptor throwing =
        new ServerInterceptor() {
          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> r) {
            throw Status.of(Status.Code.PERMISSION_DENIED).withMessage("not today").asException();
          }
        };
    try (RpcOverTcp other =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(new TestService().definition())
                .interceptor(logging) // outermost: sees the failure
                .interceptor(throwing)
                .interceptor(watching) // innermost: its responses are never read
                .build())) {
      Throwable t =
          Mono.from(other.client().unary(TestService.ECHO, text("x"), CallOptions.DEFAULT))
              .materialize()
              .block(WAIT)
              .getThrowable();
      assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.PERMISSION_DENIED);
      assertThat(serverLog).containsExactly(TestService.NAME + "/Echo PERMISSION_DENIED");
      assertThat(inner).containsExactly("cancelled");
    }
  }

  @Test
  void aHandlerThatThrowsAnError_failsItsCall_notTheConnection() {
    RpcServer server = RpcServer.builder().build();
    Publisher<StringValue> answer =
        server.intercepted(
            TestService.echoContext(),
            () -> {
              throw new ExceptionInInitializerError("a class failed to load");
            });
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> Mono.from(answer).block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.UNKNOWN));
  }

  /**
   * A value an interceptor puts on the call reaches a StreamObserver stream handler, which runs on
   * the shared stream-handler executor, not on the thread of the interceptor's onCall (where a
   * thread-local would have stayed).
   */
  @Test
  void aValuePutByAnInterceptor_reachesAnObserverStreamHandlerOnItsOwnThread() throws Exception {
    ServerContext.Key<String> user = ServerContext.Key.named("user");
    java.util.concurrent.atomic.AtomicReference<Thread> interceptorThread =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicReference<Thread> handlerThread =
        new java.util.concurrent.atomic.AtomicReference<>();
    ServerInterceptor identify =
        new ServerInterceptor() {
          @Override
          public void onCall(ServerContext call) {
            interceptorThread.set(Thread.currentThread());
            call.put(user, call.requestHeaders().get("x-user"));
          }
        };
    RpcOverTcp keyed =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(
                    ServiceDefinition.builder(TestService.NAME)
                        .method(
                            TestService.COUNT,
                            (request, context) ->
                                Observers.<com.google.protobuf.Int32Value>serve(
                                    context,
                                    out -> {
                                      handlerThread.set(Thread.currentThread());
                                      String who = context.get(user);
                                      out.onNext(
                                          com.google.protobuf.Int32Value.of(
                                              who == null ? -1 : who.length()));
                                      out.onCompleted();
                                    }))
                        .build())
                .interceptor(identify)
                .build());
    try {
      List<com.google.protobuf.Int32Value> replies =
          Flux.from(
                  keyed
                      .client()
                      .serverStreaming(
                          TestService.COUNT,
                          com.google.protobuf.Int32Value.of(1),
                          CallOptions.DEFAULT.withHeaders(new Headers().put("x-user", "grace"))))
              .collectList()
              .block(WAIT);
      assertThat(replies).containsExactly(com.google.protobuf.Int32Value.of(5));
      assertThat(handlerThread.get())
          .as("the handler ran off the interceptor's thread")
          .isNotNull()
          .isNotSameAs(interceptorThread.get());
    } finally {
      keyed.close();
    }
  }
}
