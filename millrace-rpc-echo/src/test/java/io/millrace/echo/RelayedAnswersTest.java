package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceMutiny;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.echo.v1.EchoServiceRxJava;
import io.millrace.rpc.CallOptions;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServerInterceptor;
import io.millrace.rpc.ServiceDefinition;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * The generated Reactor and RxJava bindings hand a handler's answer to the runtime through a relay
 * of the library's own subscriber type, so the library signals the runtime directly (no {@code
 * StrictSubscriber} in between); the Mutiny binding subscribes to a handler's Uni itself ({@code
 * UniAnswer}), and its client makes each call's Uni itself ({@code CallUni}). What the wrapper used
 * to guard must hold without it: an answer that comes later from another thread, a stream emitted
 * on another thread, demand held to what the caller asked for, a cancel that reaches the handler's
 * stream, a deadline that cancels the handler's answer, a failure after some responses, and a
 * client stream consumed in order. Each case runs against a service written in each library. An
 * interceptor's own subscriber is not relayed: it gets the library's Publisher as it is, Context
 * and all.
 */
class RelayedAnswersTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  /** Count's handler: replies made so far, and its stream's cancel. */
  private final AtomicLong produced = new AtomicLong();

  private final CountDownLatch countCancelled = new CountDownLatch(1);

  /** Echo's slow answer ("slow"): cancelled when the call's deadline passes. */
  private final CountDownLatch slowEchoCancelled = new CountDownLatch(1);

  private RpcOverTcp tcp;
  private EchoServiceReactor.Client echo;

  enum Library {
    REACTOR(t -> EchoServiceReactor.bind(t.reactorService())),
    RXJAVA(t -> EchoServiceRxJava.bind(t.rxJavaService())),
    MUTINY(t -> EchoServiceMutiny.bind(t.mutinyService()));

    final Function<RelayedAnswersTest, ServiceDefinition> service;

    Library(Function<RelayedAnswersTest, ServiceDefinition> service) {
      this.service = service;
    }
  }

  private void serve(Library library) throws Exception {
    tcp = RpcOverTcp.serve(RpcServer.builder().service(library.service.apply(this)).build());
    echo = new EchoServiceReactor.Client(tcp.client());
  }

  @AfterEach
  void stop() {
    if (tcp != null) {
      tcp.close();
    }
  }

  private static EchoReply reply(ByteString payload, long sequence) {
    return EchoReply.newBuilder().setPayload(payload).setSequence(sequence).build();
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  /** Chat fails after this many replies. */
  private static final int CHAT_FAILS_AFTER = 2;

  /**
   * Echo answers 20 ms later on the library's timer thread (or fails with the status asked); Count
   * replies without end, counting what it made; Collect counts; Chat echoes, then fails.
   */
  private EchoServiceReactor.Service reactorService() {
    return new EchoServiceReactor.Service() {
      @Override
      public Mono<EchoReply> echo(EchoRequest request, ServerContext context) {
        if (request.getFailWithStatus() != 0) {
          return Mono.delay(Duration.ofMillis(20))
              .then(
                  Mono.error(Status.of(Status.Code.of(request.getFailWithStatus())).asException()));
        }
        if (request.getPayload().toStringUtf8().equals("slow")) {
          return Mono.delay(Duration.ofSeconds(30))
              .map(x -> reply(request.getPayload(), 0))
              .doOnCancel(slowEchoCancelled::countDown);
        }
        return Mono.delay(Duration.ofMillis(20)).map(x -> reply(request.getPayload(), 0));
      }

      @Override
      public Flux<EchoReply> count(CountRequest request, ServerContext context) {
        if (request.getN() > 0) {
          return Flux.range(0, request.getN())
              .publishOn(Schedulers.parallel())
              .map(i -> reply(ByteString.EMPTY, i));
        }
        return Flux.<EchoReply>generate(
                sink -> sink.next(reply(ByteString.EMPTY, produced.getAndIncrement())))
            .doOnCancel(countCancelled::countDown);
      }

      @Override
      public Mono<EchoReply> collect(Flux<EchoRequest> requests, ServerContext context) {
        return requests
            .map(r -> r.getPayload().toStringUtf8())
            .reduce(String::concat)
            .map(s -> reply(ByteString.copyFromUtf8(s), s.length()));
      }

      @Override
      public Flux<EchoReply> chat(Flux<EchoRequest> requests, ServerContext context) {
        return requests
            .index((i, r) -> reply(r.getPayload(), i))
            .take(CHAT_FAILS_AFTER)
            .concatWith(
                Mono.error(
                    Status.of(Status.Code.DATA_LOSS).withMessage("chat broke").asException()));
      }

      @Override
      public Mono<Void> notify(EchoRequest request, ServerContext context) {
        return Mono.empty();
      }
    };
  }

  /** The same service in RxJava. */
  private EchoServiceRxJava.Service rxJavaService() {
    return new EchoServiceRxJava.Service() {
      @Override
      public Single<EchoReply> echo(EchoRequest request, ServerContext context) {
        if (request.getFailWithStatus() != 0) {
          return Single.timer(20, TimeUnit.MILLISECONDS)
              .flatMap(
                  x ->
                      Single.error(
                          Status.of(Status.Code.of(request.getFailWithStatus())).asException()));
        }
        if (request.getPayload().toStringUtf8().equals("slow")) {
          return Single.timer(30, TimeUnit.SECONDS)
              .map(x -> reply(request.getPayload(), 0))
              .doOnDispose(slowEchoCancelled::countDown);
        }
        return Single.timer(20, TimeUnit.MILLISECONDS).map(x -> reply(request.getPayload(), 0));
      }

      @Override
      public Flowable<EchoReply> count(CountRequest request, ServerContext context) {
        if (request.getN() > 0) {
          return Flowable.range(0, request.getN())
              .observeOn(io.reactivex.rxjava3.schedulers.Schedulers.computation())
              .map(i -> reply(ByteString.EMPTY, i));
        }
        return Flowable.<EchoReply>generate(
                emitter -> emitter.onNext(reply(ByteString.EMPTY, produced.getAndIncrement())))
            .doOnCancel(countCancelled::countDown);
      }

      @Override
      public Single<EchoReply> collect(Flowable<EchoRequest> requests, ServerContext context) {
        return requests
            .map(r -> r.getPayload().toStringUtf8())
            .reduce("", String::concat)
            .map(s -> reply(ByteString.copyFromUtf8(s), s.length()));
      }

      @Override
      public Flowable<EchoReply> chat(Flowable<EchoRequest> requests, ServerContext context) {
        return requests
            .zipWith(Flowable.rangeLong(0, Long.MAX_VALUE), (r, i) -> reply(r.getPayload(), i))
            .take(CHAT_FAILS_AFTER)
            .concatWith(
                Flowable.error(
                    Status.of(Status.Code.DATA_LOSS).withMessage("chat broke").asException()));
      }

      @Override
      public Completable notify(EchoRequest request, ServerContext context) {
        return Completable.complete();
      }
    };
  }

  /** The same service in Mutiny. */
  private EchoServiceMutiny.Service mutinyService() {
    return new EchoServiceMutiny.Service() {
      @Override
      public Uni<EchoReply> echo(EchoRequest request, ServerContext context) {
        Uni<Integer> later = Uni.createFrom().item(0).onItem().delayIt().by(Duration.ofMillis(20));
        if (request.getFailWithStatus() != 0) {
          return later
              .onItem()
              .transformToUni(
                  x ->
                      Uni.createFrom()
                          .<EchoReply>failure(
                              Status.of(Status.Code.of(request.getFailWithStatus()))
                                  .asException()));
        }
        if (request.getPayload().toStringUtf8().equals("slow")) {
          return Uni.createFrom()
              .item(reply(request.getPayload(), 0))
              .onItem()
              .delayIt()
              .by(Duration.ofSeconds(30))
              .onCancellation()
              .invoke(slowEchoCancelled::countDown);
        }
        return later.map(x -> reply(request.getPayload(), 0));
      }

      @Override
      public Multi<EchoReply> count(CountRequest request, ServerContext context) {
        if (request.getN() > 0) {
          return Multi.createFrom()
              .range(0, request.getN())
              .emitOn(Infrastructure.getDefaultWorkerPool())
              .map(i -> reply(ByteString.EMPTY, i));
        }
        return Multi.createFrom()
            .<Object, EchoReply>generator(
                Object::new,
                (state, emitter) -> {
                  emitter.emit(reply(ByteString.EMPTY, produced.getAndIncrement()));
                  return state;
                })
            .onCancellation()
            .invoke(countCancelled::countDown);
      }

      @Override
      public Uni<EchoReply> collect(Multi<EchoRequest> requests, ServerContext context) {
        return requests
            .map(r -> r.getPayload().toStringUtf8())
            .collect()
            .with(java.util.stream.Collectors.joining())
            .map(s -> reply(ByteString.copyFromUtf8(s), s.length()));
      }

      @Override
      public Multi<EchoReply> chat(Multi<EchoRequest> requests, ServerContext context) {
        AtomicLong index = new AtomicLong();
        Multi<EchoReply> first =
            requests
                .map(r -> reply(r.getPayload(), index.getAndIncrement()))
                .select()
                .first(CHAT_FAILS_AFTER);
        return Multi.createBy()
            .concatenating()
            .streams(
                first,
                Multi.createFrom()
                    .failure(
                        Status.of(Status.Code.DATA_LOSS).withMessage("chat broke").asException()));
      }

      @Override
      public Uni<Void> notify(EchoRequest request, ServerContext context) {
        return Uni.createFrom().voidItem();
      }
    };
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void anAnswerThatComesLater_fromAnotherThread_isTheResponse(Library library) throws Exception {
    serve(library);
    assertThat(echo.echo(request("later")).block(WAIT).getPayload().toStringUtf8())
        .isEqualTo("later");
    EchoRequest failing =
        EchoRequest.newBuilder().setFailWithStatus(Status.Code.ABORTED.value()).build();
    assertThatThrownBy(() -> echo.echo(failing).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.ABORTED));
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void aStreamEmittedOnAnotherThread_arrivesWholeAndInOrder(Library library) throws Exception {
    serve(library);
    java.util.List<Long> got =
        echo.count(CountRequest.newBuilder().setN(20_000).build())
            .map(EchoReply::getSequence)
            .collectList()
            .block(WAIT);
    assertThat(got).hasSize(20_000);
    for (int i = 0; i < got.size(); i++) {
      assertThat(got.get(i)).isEqualTo(i);
    }
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void aDeadlineThatPasses_failsTheCall_andCancelsTheHandlersAnswer(Library library)
      throws Exception {
    serve(library);
    assertThatThrownBy(
            () ->
                echo.echo(request("slow"), CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)))
                    .block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(slowEchoCancelled.await(10, TimeUnit.SECONDS))
        .as("the handler's answer was cancelled")
        .isTrue();
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void anEndlessStream_isHeldToTheCallersDemand_andItsCancelReachesTheHandler(Library library)
      throws Exception {
    serve(library);
    CountDownLatch gotThree = new CountDownLatch(3);
    BaseSubscriber<EchoReply> slow =
        new BaseSubscriber<>() {
          @Override
          protected void hookOnSubscribe(Subscription s) {
            request(3);
          }

          @Override
          protected void hookOnNext(EchoReply value) {
            gotThree.countDown();
          }
        };
    echo.count(CountRequest.newBuilder().setN(0).build()).subscribe(slow);
    assertThat(gotThree.await(10, TimeUnit.SECONDS)).isTrue();
    // The caller's reader grants the server a window of credit (a limit-rate, not a frame per
    // request(1)), and the handler may fill it; then it must stop until the caller asks again.
    // (Settled: unchanged for half a second, as a slow machine may fill the window slowly.)
    long filled = -1;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    for (int quiet = 0; quiet < 5 && System.nanoTime() < until; ) {
      filled = produced.get();
      Thread.sleep(100);
      quiet = produced.get() == filled ? quiet + 1 : 0;
    }
    assertThat(filled).isBetween(3L, 1024L);
    Thread.sleep(300);
    assertThat(produced.get()).as("made while the caller asked for nothing").isEqualTo(filled);
    slow.cancel();
    assertThat(countCancelled.await(10, TimeUnit.SECONDS))
        .as("the handler's stream was cancelled")
        .isTrue();
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void aFailureAfterSomeResponses_endsTheCallWithItsStatus_afterThem(Library library)
      throws Exception {
    serve(library);
    java.util.List<String> got = new java.util.concurrent.CopyOnWriteArrayList<>();
    assertThatThrownBy(
            () ->
                echo.chat(Flux.range(0, 10).map(i -> request("m" + i)))
                    .doOnNext(r -> got.add(r.getSequence() + ":" + r.getPayload().toStringUtf8()))
                    .blockLast(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.DATA_LOSS);
              assertThat(e.status().message()).isEqualTo("chat broke");
            });
    assertThat(got).containsExactly("0:m0", "1:m1");
  }

  /**
   * An interceptor subscribes to the handler's answer itself, so it gets the library's Publisher
   * with the library's own rules: Reactor's Context written downstream of it reaches the handler.
   */
  @Test
  void anInterceptorsSubscriber_getsTheAnswerItself_withReactorsContext() throws Exception {
    ServerInterceptor withUser =
        new ServerInterceptor() {
          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
            return Flux.from(responses).contextWrite(Context.of("user", "ada"));
          }
        };
    EchoServiceReactor.Service service =
        new EchoServiceReactor.Service() {
          @Override
          public Mono<EchoReply> echo(EchoRequest request, ServerContext context) {
            return Mono.deferContextual(
                c -> Mono.just(reply(ByteString.copyFromUtf8(c.get("user")), 0)));
          }

          @Override
          public Flux<EchoReply> count(CountRequest request, ServerContext context) {
            return Flux.deferContextual(
                c ->
                    Flux.range(0, request.getN())
                        .map(i -> reply(ByteString.copyFromUtf8(c.get("user")), i)));
          }

          @Override
          public Mono<EchoReply> collect(Flux<EchoRequest> requests, ServerContext context) {
            return Mono.empty();
          }

          @Override
          public Flux<EchoReply> chat(Flux<EchoRequest> requests, ServerContext context) {
            return Flux.empty();
          }

          @Override
          public Mono<Void> notify(EchoRequest request, ServerContext context) {
            return Mono.empty();
          }
        };
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(EchoServiceReactor.bind(service))
                .interceptor(withUser)
                .build());
    echo = new EchoServiceReactor.Client(tcp.client());
    assertThat(echo.echo(request("x")).block(WAIT).getPayload().toStringUtf8()).isEqualTo("ada");
    assertThat(
            echo.count(CountRequest.newBuilder().setN(3).build())
                .map(r -> r.getPayload().toStringUtf8())
                .collectList()
                .block(WAIT))
        .containsExactly("ada", "ada", "ada");
  }

  /**
   * The generated client's Mono (CallMono, not Mono.fromDirect) keeps Reactor's automatic context
   * propagation: code mapping the answer on the client's event loop sees the caller's thread-local.
   */
  @Test
  void theGeneratedReactorClient_restoresThreadLocals_underAutomaticContextPropagation()
      throws Exception {
    ThreadLocal<String> trace = new ThreadLocal<>();
    io.micrometer.context.ContextRegistry.getInstance()
        .registerThreadLocalAccessor("relayed.test.trace", trace::get, trace::set, trace::remove);
    serve(Library.REACTOR);
    Hooks.enableAutomaticContextPropagation();
    try {
      String seen =
          echo.echo(request("x"))
              .map(r -> trace.get() + " on " + Thread.currentThread().getName())
              .contextWrite(Context.of("relayed.test.trace", "t-1"))
              .block(WAIT);
      assertThat(seen).startsWith("t-1 on ").doesNotEndWith(" on main");
    } finally {
      Hooks.disableAutomaticContextPropagation();
      io.micrometer.context.ContextRegistry.getInstance()
          .removeThreadLocalAccessor("relayed.test.trace");
    }
  }

  /**
   * The generated Mutiny client's Uni (CallUni, not {@code Uni.createFrom().publisher}) gives the
   * response, the status of a failure, the end of a call without a response as a null item, and a
   * client stream's one reply; cancelling it cancels the call at the handler, and its deadline
   * holds.
   */
  @Test
  void theGeneratedMutinyClient_givesResponsesAndStatuses_andItsCancelReachesTheHandler()
      throws Exception {
    serve(Library.MUTINY);
    io.millrace.rpc.RpcClient rpc = tcp.client();
    EchoServiceMutiny.Client mutiny = new EchoServiceMutiny.Client(rpc);
    assertThat(mutiny.echo(request("uni")).await().atMost(WAIT).getPayload().toStringUtf8())
        .isEqualTo("uni");
    EchoRequest failing =
        EchoRequest.newBuilder().setFailWithStatus(Status.Code.ABORTED.value()).build();
    assertThatThrownBy(() -> mutiny.echo(failing).await().atMost(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.ABORTED));
    assertThat(mutiny.notify(request("n")).await().atMost(WAIT)).isNull();
    EchoReply collected =
        mutiny
            .collect(Multi.createFrom().range(0, 12).map(i -> request("" + (i % 10))))
            .await()
            .atMost(WAIT);
    assertThat(collected.getPayload().toStringUtf8()).isEqualTo("012345678901");
    assertThat(collected.getSequence()).isEqualTo(12);

    assertThatThrownBy(
            () ->
                mutiny
                    .echo(request("slow"), CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)))
                    .await()
                    .atMost(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(slowEchoCancelled.await(10, TimeUnit.SECONDS)).isTrue();

    // The calls end by themselves (CallUni does not cancel after the item): none stays open.
    io.millrace.core.Connection connection = rpc.connection();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (connection.activeStreams() != 0 && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertThat(connection.activeStreams()).isZero();
  }

  @Test
  void cancellingTheGeneratedMutinyClientsUni_cancelsTheCallAtTheHandler() throws Exception {
    serve(Library.MUTINY);
    EchoServiceMutiny.Client mutiny = new EchoServiceMutiny.Client(tcp.client());
    java.util.concurrent.atomic.AtomicReference<Object> signal =
        new java.util.concurrent.atomic.AtomicReference<>();
    io.smallrye.mutiny.subscription.Cancellable call =
        mutiny.echo(request("slow")).subscribe().with(signal::set, signal::set);
    Thread.sleep(100); // the call reaches the handler
    call.cancel();
    assertThat(slowEchoCancelled.await(10, TimeUnit.SECONDS))
        .as("the handler's answer was cancelled")
        .isTrue();
    assertThat(signal.get()).as("nothing reaches a cancelled Uni").isNull();
  }

  /**
   * A Uni's item that comes before anyone asks (here an interceptor asks 50 ms after it subscribed)
   * waits for the request, as a Publisher's must, and then goes out.
   */
  @Test
  void aMutinyAnswerThatComesBeforeTheRequest_waitsForIt() throws Exception {
    java.util.concurrent.ScheduledExecutorService timer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    java.util.concurrent.atomic.AtomicInteger early =
        new java.util.concurrent.atomic.AtomicInteger();
    ServerInterceptor asksLate =
        new ServerInterceptor() {
          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
            return subscriber ->
                responses.subscribe(
                    new org.reactivestreams.Subscriber<Resp>() {
                      volatile boolean asked;

                      @Override
                      public void onSubscribe(Subscription s) {
                        subscriber.onSubscribe(
                            new Subscription() {
                              @Override
                              public void request(long n) {
                                timer.schedule(
                                    () -> {
                                      asked = true;
                                      s.request(n);
                                    },
                                    50,
                                    TimeUnit.MILLISECONDS);
                              }

                              @Override
                              public void cancel() {
                                s.cancel();
                              }
                            });
                      }

                      @Override
                      public void onNext(Resp r) {
                        if (!asked) {
                          early.incrementAndGet();
                        }
                        subscriber.onNext(r);
                      }

                      @Override
                      public void onError(Throwable t) {
                        subscriber.onError(t);
                      }

                      @Override
                      public void onComplete() {
                        subscriber.onComplete();
                      }
                    });
          }
        };
    EchoServiceMutiny.Service known =
        new EchoServiceMutiny.Service() {
          @Override
          public Uni<EchoReply> echo(EchoRequest request, ServerContext context) {
            return Uni.createFrom().item(reply(request.getPayload(), 0));
          }

          @Override
          public Multi<EchoReply> count(CountRequest request, ServerContext context) {
            return Multi.createFrom().empty();
          }

          @Override
          public Uni<EchoReply> collect(Multi<EchoRequest> requests, ServerContext context) {
            return Uni.createFrom().nullItem();
          }

          @Override
          public Multi<EchoReply> chat(Multi<EchoRequest> requests, ServerContext context) {
            return Multi.createFrom().empty();
          }

          @Override
          public Uni<Void> notify(EchoRequest request, ServerContext context) {
            return Uni.createFrom().voidItem();
          }
        };
    try {
      tcp =
          RpcOverTcp.serve(
              RpcServer.builder()
                  .service(EchoServiceMutiny.bind(known))
                  .interceptor(asksLate)
                  .build());
      echo = new EchoServiceReactor.Client(tcp.client());
      for (int i = 0; i < 5; i++) {
        assertThat(echo.echo(request("held" + i)).block(WAIT).getPayload().toStringUtf8())
            .isEqualTo("held" + i);
      }
      assertThat(early.get()).as("responses given before they were asked for").isZero();
    } finally {
      timer.shutdownNow();
    }
  }

  /**
   * Echo's answer as lazy work in each library: it counts its runs, and fails UNAVAILABLE while
   * {@code failures} is positive. The other methods answer nothing.
   */
  private static ServiceDefinition countingEcho(
      Library library, AtomicLong runs, java.util.concurrent.atomic.AtomicInteger failures) {
    java.util.function.Supplier<EchoReply> work =
        () -> {
          runs.incrementAndGet();
          if (failures.getAndDecrement() > 0) {
            throw Status.UNAVAILABLE.withMessage("not yet").asException();
          }
          return reply(ByteString.copyFromUtf8("worked"), 0);
        };
    switch (library) {
      case REACTOR:
        return EchoServiceReactor.bind(
            new EmptyReactorService() {
              @Override
              public Mono<EchoReply> echo(EchoRequest request, ServerContext context) {
                return Mono.fromSupplier(work);
              }
            });
      case RXJAVA:
        return EchoServiceRxJava.bind(
            new EmptyRxJavaService() {
              @Override
              public Single<EchoReply> echo(EchoRequest request, ServerContext context) {
                return Single.fromSupplier(work::get);
              }
            });
      default:
        return EchoServiceMutiny.bind(
            new EmptyMutinyService() {
              @Override
              public Uni<EchoReply> echo(EchoRequest request, ServerContext context) {
                return Uni.createFrom().item(work);
              }
            });
    }
  }

  /**
   * With interceptors, a handler's answer is subscribed when an interceptor subscribes: one that
   * refuses the call keeps the answer's work from running at all, and one that retries runs it
   * again (each subscription is its own).
   */
  @ParameterizedTest
  @EnumSource(Library.class)
  void anInterceptorDecidesWhenTheAnswersWorkRuns_refusingOrRetrying(Library library)
      throws Exception {
    AtomicLong runs = new AtomicLong();
    java.util.concurrent.atomic.AtomicInteger failures =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean refuse =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    ServerInterceptor refuseOrRetry =
        new ServerInterceptor() {
          @Override
          public <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
            if (refuse.get()) {
              return Mono.error(
                  Status.of(Status.Code.PERMISSION_DENIED).withMessage("refused").asException());
            }
            return Flux.from(responses).retry(1);
          }
        };
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(countingEcho(library, runs, failures))
                .interceptor(refuseOrRetry)
                .build());
    echo = new EchoServiceReactor.Client(tcp.client());
    assertThatThrownBy(() -> echo.echo(request("x")).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(runs.get()).as("a refused call's answer never ran").isZero();

    refuse.set(false);
    failures.set(1);
    assertThat(echo.echo(request("x")).block(WAIT).getPayload().toStringUtf8()).isEqualTo("worked");
    assertThat(runs.get()).as("failed once, then ran again for the retry").isEqualTo(2);
  }

  /** Services that answer nothing, for tests that override one method. */
  private static class EmptyReactorService implements EchoServiceReactor.Service {
    @Override
    public Mono<EchoReply> echo(EchoRequest request, ServerContext context) {
      return Mono.empty();
    }

    @Override
    public Flux<EchoReply> count(CountRequest request, ServerContext context) {
      return Flux.empty();
    }

    @Override
    public Mono<EchoReply> collect(Flux<EchoRequest> requests, ServerContext context) {
      return Mono.empty();
    }

    @Override
    public Flux<EchoReply> chat(Flux<EchoRequest> requests, ServerContext context) {
      return Flux.empty();
    }

    @Override
    public Mono<Void> notify(EchoRequest request, ServerContext context) {
      return Mono.empty();
    }
  }

  private static class EmptyRxJavaService implements EchoServiceRxJava.Service {
    @Override
    public Single<EchoReply> echo(EchoRequest request, ServerContext context) {
      return Single.never();
    }

    @Override
    public Flowable<EchoReply> count(CountRequest request, ServerContext context) {
      return Flowable.empty();
    }

    @Override
    public Single<EchoReply> collect(Flowable<EchoRequest> requests, ServerContext context) {
      return Single.never();
    }

    @Override
    public Flowable<EchoReply> chat(Flowable<EchoRequest> requests, ServerContext context) {
      return Flowable.empty();
    }

    @Override
    public Completable notify(EchoRequest request, ServerContext context) {
      return Completable.complete();
    }
  }

  private static class EmptyMutinyService implements EchoServiceMutiny.Service {
    @Override
    public Uni<EchoReply> echo(EchoRequest request, ServerContext context) {
      return Uni.createFrom().nullItem();
    }

    @Override
    public Multi<EchoReply> count(CountRequest request, ServerContext context) {
      return Multi.createFrom().empty();
    }

    @Override
    public Uni<EchoReply> collect(Multi<EchoRequest> requests, ServerContext context) {
      return Uni.createFrom().nullItem();
    }

    @Override
    public Multi<EchoReply> chat(Multi<EchoRequest> requests, ServerContext context) {
      return Multi.createFrom().empty();
    }

    @Override
    public Uni<Void> notify(EchoRequest request, ServerContext context) {
      return Uni.createFrom().voidItem();
    }
  }

  @ParameterizedTest
  @EnumSource(Library.class)
  void aClientStream_isConsumedInOrder(Library library) throws Exception {
    serve(library);
    EchoReply reply = echo.collect(Flux.range(0, 50).map(i -> request("" + (i % 10)))).block(WAIT);
    assertThat(reply.getPayload().toStringUtf8())
        .isEqualTo("01234567890123456789012345678901234567890123456789");
    assertThat(reply.getSequence()).isEqualTo(50);
  }
}
