package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.observer.ObserverHandler;
import io.millrace.observer.ObserverResponder;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.reactor.ReactorRequester;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.millrace.streams.internal.InboundPublisher;
import io.millrace.transport.netty.MillraceClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * The StreamObserver flavour's automatic backpressure: a handler that ignores {@code isReady()} is
 * held to the reader's pace when it runs off the loop, and fails its call, not the server, when it
 * runs on the loop (where waiting would stall every connection on it).
 */
class ObserverTest {
  private static final int N = 20_000;
  private final AtomicLong sent = new AtomicLong();
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private Server server;
  private MillraceClient client;

  /** Sends N payloads as fast as onNext returns, never asking isReady. */
  private final ObserverHandler flood =
      new ObserverHandler() {
        @Override
        public void requestStream(Payload payload, StreamObserver<Payload> responses) {
          ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
          for (int i = 0; i < N && !out.isCancelled(); i++) {
            out.onNext(Behaviour.pooled(Integer.toString(i)));
            sent.incrementAndGet();
          }
          out.onCompleted();
        }
      };

  private ReactorRequester connect(StreamsOptions serverOptions) throws Exception {
    return connect(flood, serverOptions);
  }

  private ReactorRequester connect(ObserverHandler handler, StreamsOptions serverOptions)
      throws Exception {
    return connect(ObserverResponder.of(handler, serverOptions));
  }

  private ReactorRequester connect(io.millrace.core.Responder responder) throws Exception {
    server = Server.millrace(responder);
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    return ReactorRequester.of(c);
  }

  @AfterEach
  void close() throws InterruptedException {
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
    executor.shutdownNow();
  }

  @Test
  void aFloodingHandlerOnAnExecutorIsHeldToTheReadersPace() throws Exception {
    heldToTheReadersPace(connect(StreamsOptions.builder().handlerExecutor(executor).build()));
  }

  /** With no executor given, a stream's handler runs on the shared one and is held all the same. */
  @Test
  void aFloodingHandlerWithTheDefaults_isHeldToTheReadersPace() throws Exception {
    heldToTheReadersPace(connect(ObserverResponder.of(flood)));
  }

  /** The flood of N, which fails on the loop (below), arrives whole with the defaults. */
  @Test
  void aFloodingHandlerWithTheDefaults_sendsEverythingAsTheReaderReads() throws Exception {
    ReactorRequester r = connect(ObserverResponder.of(flood));
    List<String> got =
        Flux.from(r.requestStream(Payload.of("go")))
            .limitRate(16)
            .map(Payload::dataUtf8)
            .collectList()
            .block(Duration.ofSeconds(60));
    assertThat(got).hasSize(N).startsWith("0", "1").endsWith(Integer.toString(N - 1));
  }

  private void heldToTheReadersPace(ReactorRequester r) {
    // What the handler got ahead of the reader: credit in flight plus the bounded wait, not N.
    assertThat(mostAheadOfASlowReader(Flux.from(r.requestStream(Payload.of("go"))), sent))
        .isLessThan(2_000);
    assertThat(sent.get()).isLessThan(N);
  }

  /**
   * Reads 300 of {@code answers} at one a millisecond (asking 16 at a time) and returns the most
   * that {@code produced} counted beyond what had been read.
   */
  private static long mostAheadOfASlowReader(Flux<Payload> answers, AtomicLong produced) {
    AtomicLong received = new AtomicLong();
    AtomicLong maxAhead = new AtomicLong();
    long count =
        answers
            .limitRate(16)
            .delayElements(Duration.ofMillis(1), reactor.core.scheduler.Schedulers.single())
            .take(300)
            .doOnNext(
                p -> {
                  long ahead = produced.get() - received.incrementAndGet();
                  maxAhead.accumulateAndGet(ahead, Math::max);
                })
            .count()
            .block(Duration.ofSeconds(30));
    assertThat(count).isEqualTo(300);
    return maxAhead.get();
  }

  @Test
  void aHeldHandlerIsWokenAsTheReaderTakesValues_notByATimer() throws Exception {
    // The handler outruns the reader and is held many times over the N values; each time the
    // reader takes what waits, the loop wakes it at once. Were a wake-up lost, that hold would
    // last until the parked producer's own 100 ms check: with the loop's wake-up taken out, some
    // forty of the handler's onNext calls take that long.
    AtomicLong longWaits = new AtomicLong();
    AtomicLong holds = new AtomicLong();
    server =
        Server.millrace(
            ObserverResponder.of(
                new ObserverHandler() {
                  @Override
                  public void requestStream(Payload payload, StreamObserver<Payload> responses) {
                    for (int i = 0; i < N; i++) {
                      long start = System.nanoTime();
                      responses.onNext(Behaviour.pooled(Integer.toString(i)));
                      long took = System.nanoTime() - start;
                      if (took > 1_000_000) {
                        holds.incrementAndGet();
                      }
                      if (took > 90_000_000) {
                        longWaits.incrementAndGet();
                      }
                    }
                    responses.onCompleted();
                  }
                },
                StreamsOptions.builder().handlerExecutor(executor).build()));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    long count =
        Flux.from(ReactorRequester.of(c).requestStream(Payload.of("go")))
            .limitRate(8)
            .count()
            .block(Duration.ofSeconds(60));
    assertThat(count).isEqualTo(N);
    // (Pauses of the whole machine, a GC, a loaded CI host, may stretch some of the thousands of
    // holds; a lost wake-up stretches some forty.)
    assertThat(longWaits.get())
        .as("holds that ended only by the producer's own check, of %d holds", holds.get())
        .isLessThanOrEqualTo(20);
  }

  /**
   * The loop grpc-java users write, on the event loop: a few thousand small values sent without
   * looking at isReady. They wait (about a mebibyte may) and go out as the reader reads; only a
   * flood past that fails (below).
   */
  @Test
  void aHandlerOnTheLoopSendingThousandsOfSmallValuesInALoop_finishes() throws Exception {
    int n = 5_000;
    ReactorRequester r =
        connect(
            ObserverResponder.onEventLoop(
                new ObserverHandler() {
                  @Override
                  public void requestStream(Payload payload, StreamObserver<Payload> responses) {
                    for (int i = 0; i < n; i++) {
                      responses.onNext(Behaviour.pooled(Integer.toString(i)));
                    }
                    responses.onCompleted();
                  }
                },
                StreamsOptions.DEFAULT));
    List<String> got =
        Flux.from(r.requestStream(Payload.of("go")))
            .limitRate(16)
            .map(Payload::dataUtf8)
            .collectList()
            .block(Duration.ofSeconds(30));
    assertThat(got).hasSize(n).startsWith("0", "1").endsWith(Integer.toString(n - 1));
  }

  @Test
  void aFloodingHandlerOnTheLoopFailsItsCallAndTheServerGoesOn() throws Exception {
    ReactorRequester r = connect(ObserverResponder.onEventLoop(flood, StreamsOptions.DEFAULT));
    Throwable failure =
        Flux.from(r.requestStream(Payload.of("go")))
            .limitRate(16)
            .then()
            .map(v -> (Throwable) null)
            .onErrorResume(e -> reactor.core.publisher.Mono.just(e))
            .block(Duration.ofSeconds(30));
    assertThat(failure)
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> {
              assertThat(e.errorCode()).isEqualTo(io.millrace.frame.ErrorCode.APPLICATION_ERROR);
              assertThat(e.getMessage()).contains("sent faster than the peer reads");
            });
    assertThat(sent.get()).as("the handler stopped once its call failed").isLessThan(N);
    // The connection and the server are fine: the next call is answered on the same connection.
    assertThat(r.connection().isOpen()).isTrue();
    assertThatThrownBy(() -> r.requestResponse(Payload.of("x")).block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> assertThat(e.getMessage()).isEqualTo("request-response not supported"));
  }

  /**
   * Where handlers run: by default the one-value ones on the event loop and stream and channel
   * handlers off it; {@code onEventLoop} runs all on the loop, an executor in the options all
   * there.
   */
  @Test
  void oneValueHandlersRunOnTheLoop_streamAndChannelHandlersOffIt_byDefault() throws Exception {
    assertThat(whereHandlersRun(h -> ObserverResponder.of(h)))
        .isEqualTo(
            java.util.Map.of("fnf", true, "response", true, "stream", false, "channel", false));
  }

  @Test
  void onEventLoop_runsEveryHandlerOnTheLoop_andRefusesOptionsWithAnExecutor() throws Exception {
    assertThat(whereHandlersRun(h -> ObserverResponder.onEventLoop(h, StreamsOptions.DEFAULT)))
        .isEqualTo(
            java.util.Map.of("fnf", true, "response", true, "stream", true, "channel", true));
    assertThatThrownBy(
            () ->
                ObserverResponder.onEventLoop(
                    flood, StreamsOptions.builder().handlerExecutor(executor).build()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anExecutorInTheOptions_runsEveryHandlerThere() throws Exception {
    StreamsOptions options = StreamsOptions.builder().handlerExecutor(executor).build();
    assertThat(whereHandlersRun(h -> ObserverResponder.of(h, options)))
        .isEqualTo(
            java.util.Map.of("fnf", false, "response", false, "stream", false, "channel", false));
  }

  /**
   * A channel responder that answers each value from its request observer (on the loop, where it
   * cannot wait) and a requester that sends far faster than it reads the answers: the responder
   * withholds the requester's credit while its answers wait, so the requester is held back and the
   * call goes on, instead of answers piling up until the call fails.
   */
  @Test
  void anEchoingChannel_holdsBackARequesterThatSendsFasterThanItReads() throws Exception {
    ReactorRequester r =
        connect(
            new ObserverHandler() {
              @Override
              public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
                return echoing(responses);
              }
            },
            StreamsOptions.DEFAULT);
    AtomicLong generated = new AtomicLong();
    Flux<Payload> answers =
        Flux.from(
            r.requestChannel(
                Flux.range(0, 1_000_000)
                    .map(i -> Payload.of(Integer.toString(i)))
                    .doOnNext(p -> generated.incrementAndGet())));
    // Credit both ways and what may wait at the responder: hundreds, not the thousands of small
    // answers a loop may leave waiting before its call fails.
    assertThat(mostAheadOfASlowReader(answers, generated)).isLessThan(3_000);
  }

  /**
   * A channel whose handler runs on an executor, opened with one value and ended at once: the
   * request observer hears the value, then the end. (It once heard the end first, about one time in
   * eight: the requester's COMPLETE was read and delivered before the loop ran the task giving the
   * opening value. So many channels, on one connection.)
   */
  @Test
  void aChannelHandlerOnAnExecutor_hearsTheOpeningValueBeforeTheEnd() throws Exception {
    ReactorRequester r =
        connect(
            new ObserverHandler() {
              @Override
              public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
                return echoing(responses);
              }
            },
            StreamsOptions.builder().handlerExecutor(executor).build());
    List<List<String>> echoes =
        Flux.range(0, 200)
            .concatMap(
                i ->
                    Flux.from(r.requestChannel(Flux.just(Payload.of("c" + i))))
                        .map(Payload::dataUtf8)
                        .collectList())
            .collectList()
            .block(Duration.ofSeconds(60));
    for (int i = 0; i < echoes.size(); i++) {
      assertThat(echoes.get(i)).as("channel %d", i).containsExactly("c" + i);
    }
  }

  /**
   * RSocket's half-close, not gRPC's whole-call end: a channel responder that completes on the
   * first value goes on hearing the requester's values, then their end.
   */
  @Test
  void aChannelResponderThatCompletes_goesOnHearingTheRequesterUntilItEnds() throws Exception {
    halfClose(false);
  }

  /** The same when it completes in its handler, before it returns its request observer. */
  @Test
  void aChannelResponderThatCompletesBeforeReturning_goesOnHearingTheRequester() throws Exception {
    halfClose(true);
  }

  private void halfClose(boolean inTheHandler) throws Exception {
    java.util.List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
    ReactorRequester r =
        connect(
            new ObserverHandler() {
              @Override
              public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
                if (inTheHandler) {
                  responses.onNext(Payload.of("done"));
                  responses.onCompleted();
                }
                return new StreamObserver<>() {
                  @Override
                  public void onNext(Payload value) {
                    heard.add(value.dataUtf8());
                    if (heard.size() == 1 && !inTheHandler) {
                      responses.onNext(Payload.of("done"));
                      responses.onCompleted();
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    heard.add("error " + t);
                    ended.countDown();
                  }

                  @Override
                  public void onCompleted() {
                    ended.countDown();
                  }
                };
              }
            },
            StreamsOptions.DEFAULT);
    reactor.core.publisher.Sinks.Many<Payload> out =
        reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
    out.tryEmitNext(Payload.of("a"));
    List<String> answers =
        Flux.from(r.requestChannel(out.asFlux()))
            .map(Payload::dataUtf8)
            .doOnComplete(
                () -> { // the responses ended: the requester goes on sending, then ends
                  out.tryEmitNext(Payload.of("b"));
                  out.tryEmitNext(Payload.of("c"));
                  out.tryEmitComplete();
                })
            .collectList()
            .block(TIMEOUT);
    assertThat(answers).containsExactly("done");
    assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(heard).containsExactly("a", "b", "c");
  }

  /**
   * A sink that asks for values from a thread of its own (the gRPC bridge's does) still has the
   * on-ready handler run on the call's loop, never beside the loop's own callbacks.
   */
  @Test
  void aRequestFromAnotherThread_runsTheOnReadyHandlerOnTheLoop() throws Exception {
    io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
    try {
      io.millrace.observer.internal.ObserverCall<Payload, Payload> call =
          new io.millrace.observer.internal.ObserverCall<>(
              loop, io.millrace.observer.internal.ObserverCall.PAYLOADS, 16, true, false);
      java.util.concurrent.CompletableFuture<Boolean> onLoop =
          new java.util.concurrent.CompletableFuture<>();
      org.reactivestreams.Subscription[] subscription = new org.reactivestreams.Subscription[1];
      call.serving(() -> call.setOnReadyHandler(() -> onLoop.complete(loop.inEventLoop())))
          .subscribe(
              new org.reactivestreams.Subscriber<>() {
                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                  subscription[0] = s;
                }

                @Override
                public void onNext(Payload p) {
                  p.release();
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onComplete() {}
              });
      Thread.sleep(50); // the handler has returned: its started() ran on the loop
      subscription[0].request(1); // from this thread
      assertThat(onLoop.get(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      loop.shutdownGracefully();
    }
  }

  /** For each interaction, whether its handler ran on a Netty event loop. */
  private java.util.Map<String, Boolean> whereHandlersRun(
      java.util.function.Function<ObserverHandler, io.millrace.core.Responder> serve)
      throws Exception {
    java.util.Map<String, Boolean> onLoop = new java.util.concurrent.ConcurrentHashMap<>();
    ObserverHandler recording =
        new ObserverHandler() {
          private void record(String what) {
            onLoop.put(what, io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null);
          }

          @Override
          public void fireAndForget(Payload payload) {
            record("fnf");
          }

          @Override
          public void requestResponse(Payload payload, StreamObserver<Payload> response) {
            record("response");
            response.onNext(Payload.of("r"));
            response.onCompleted();
          }

          @Override
          public void requestStream(Payload payload, StreamObserver<Payload> responses) {
            record("stream");
            responses.onNext(Payload.of("s"));
            responses.onCompleted();
          }

          @Override
          public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
            record("channel");
            return echoing(responses);
          }
        };
    ReactorRequester r = connect(serve.apply(recording));
    assertThat(r.requestResponse(Payload.of("q")).map(Payload::dataUtf8).block(TIMEOUT))
        .isEqualTo("r");
    assertThat(
            Flux.from(r.requestStream(Payload.of("q")))
                .map(Payload::dataUtf8)
                .collectList()
                .block(TIMEOUT))
        .containsExactly("s");
    assertThat(
            Flux.from(r.requestChannel(Flux.just(Payload.of("c"))))
                .map(Payload::dataUtf8)
                .collectList()
                .block(TIMEOUT))
        .containsExactly("c");
    r.fireAndForget(Payload.of("f")).block(TIMEOUT);
    long until = System.nanoTime() + TIMEOUT.toNanos();
    while (!onLoop.containsKey("fnf") && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    return onLoop;
  }

  /** A request observer that answers each value with itself and ends as the requests end. */
  private static StreamObserver<Payload> echoing(StreamObserver<Payload> responses) {
    return new StreamObserver<>() {
      @Override
      public void onNext(Payload value) {
        responses.onNext(value);
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {
        responses.onCompleted();
      }
    };
  }

  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /**
   * A fire-and-forget from a thread that finds the hand-off full is refused with NoRoomException,
   * never dropped in silence, and what was accepted arrives.
   */
  @Test
  void aFireAndForgetWithNoRoomIsRefusedAndWhatWasAcceptedArrives() throws Exception {
    Probe probe = new Probe();
    server = Server.millrace(io.millrace.reactor.ReactorResponder.of(new ReactorEcho(probe)));
    client =
        MillraceClient.builder()
            .config(Server.CONFIG.toBuilder().maxQueuedCallBytes(8 * 1024).build())
            .eventLoopThreads(1)
            .build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    io.millrace.observer.ObserverRequester r = io.millrace.observer.ObserverRequester.of(c);
    // Hold the client's loop, so that what is sent waits in the hand-off and fills it.
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    c.executor()
        .execute(
            () -> {
              held.countDown();
              try {
                io.millrace.testing.LoopBlockingExtension.onPurpose(
                    () -> release.await(10, TimeUnit.SECONDS));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
    String body = "x".repeat(1000);
    int accepted = 0;
    try {
      for (int i = 0; i < 100; i++) {
        r.fireAndForget(Payload.of(body));
        accepted++;
      }
    } catch (io.millrace.core.NoRoomException expected) {
      // the hand-off is full: refused, and the caller knows
    } finally {
      release.countDown();
    }
    assertThat(accepted).isBetween(1, 99);
    for (int i = 0; i < accepted; i++) {
      assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo(body);
    }
  }

  /**
   * A fire-and-forget has no call to fail, so the requester says whether it was sent: false, the
   * payload released, once the connection is closing.
   */
  @Test
  void aFireAndForgetOnAClosedConnection_returnsFalse_andReleasesThePayload() throws Exception {
    Probe probe = new Probe();
    server = Server.millrace(io.millrace.reactor.ReactorResponder.of(new ReactorEcho(probe)));
    client = MillraceClient.builder().eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    io.millrace.observer.ObserverRequester r = io.millrace.observer.ObserverRequester.of(c);
    assertThat(
            c.executor()
                .submit(() -> r.fireAndForget(Payload.of("sent")))
                .get(10, TimeUnit.SECONDS))
        .isTrue();
    assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo("sent");
    c.dispose();
    c.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
    io.netty.buffer.ByteBuf data =
        io.netty.buffer.Unpooled.copiedBuffer("late", java.nio.charset.StandardCharsets.UTF_8);
    assertThat(
            c.executor().submit(() -> r.fireAndForget(Payload.of(data))).get(10, TimeUnit.SECONDS))
        .as("refused, and the caller knows")
        .isFalse();
    assertThat(data.refCnt()).as("released").isZero();
  }

  /**
   * A requester reading automatically takes values as they arrive, so it grants unbounded credit at
   * once (no REQUEST_N after the first), as a plain {@code subscribe()} does; one that took flow
   * control in hand grants what it asked for and no more.
   */
  @Test
  void aRequesterReadingAutomaticallyGrantsUnboundedCreditAndAManualOneWhatItAsks()
      throws Exception {
    java.util.concurrent.BlockingQueue<Long> credits =
        new java.util.concurrent.LinkedTransferQueue<>();
    int total = 3_000;
    server = Server.millrace(new CreditRecorder(credits, total));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    io.millrace.observer.ObserverRequester r = io.millrace.observer.ObserverRequester.of(c);

    Counter automatic = new Counter();
    r.requestStream(Payload.of("go"), automatic);
    assertThat(automatic.done.get(10, TimeUnit.SECONDS)).isEqualTo(total);
    assertThat(credits.poll(10, TimeUnit.SECONDS)).as("opening credit").isEqualTo(Long.MAX_VALUE);
    assertThat(credits).as("no credit granted later").isEmpty();

    Counter manual =
        new Counter() {
          @Override
          public void beforeStart(io.millrace.observer.ClientCallStreamObserver<Payload> call) {
            call.disableAutoInboundFlowControl();
            call.request(5);
          }
        };
    r.requestStream(Payload.of("go"), manual);
    // What it asked for, plus the prefetch the streams layer grants ahead (held there, not given):
    // 16 before the payloads' size is known, growing toward the whole once they are seen to be
    // small.
    assertThat(credits.poll(10, TimeUnit.SECONDS))
        .as("opening credit")
        .isEqualTo(5L + InboundPublisher.FIRST_PREFETCH);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (manual.count.get() < 5 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    Thread.sleep(200); // time for anything more to arrive, which must not
    assertThat(manual.count.get()).isEqualTo(5);
    assertThat(manual.done).isNotDone();
    // The prefetch doubles per payload toward the whole (a step that adds less than three quarters
    // of it waits for the next request), so some of that growth, never more.
    assertThat(credits.stream().mapToLong(Long::longValue).sum())
        .as("granted later: the prefetch's growth, no more")
        .isPositive()
        .isLessThanOrEqualTo(
            StreamsOptions.DEFAULT.prefetch() - (long) InboundPublisher.FIRST_PREFETCH);
  }

  /** Counts what arrives; completes {@link #done} with the count. */
  private static class Counter
      implements io.millrace.observer.ClientResponseObserver<Payload, Payload> {
    final java.util.concurrent.atomic.AtomicInteger count =
        new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.CompletableFuture<Integer> done =
        new java.util.concurrent.CompletableFuture<>();

    @Override
    public void beforeStart(io.millrace.observer.ClientCallStreamObserver<Payload> call) {}

    @Override
    public void onNext(Payload value) {
      count.incrementAndGet();
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      done.complete(count.get());
    }
  }

  /**
   * Answers a request-stream with {@code total} payloads, sent while the requester's credit lasts,
   * and records the credit it opened with and each grant after (the rise seen at on-ready).
   */
  private static final class CreditRecorder implements io.millrace.core.Responder {
    private final java.util.concurrent.BlockingQueue<Long> credits;
    private final int total;

    CreditRecorder(java.util.concurrent.BlockingQueue<Long> credits, int total) {
      this.credits = credits;
      this.total = total;
    }

    @Override
    public io.millrace.core.StreamListener requestStream(
        io.millrace.core.Stream stream,
        io.netty.buffer.ByteBuf metadata,
        io.netty.buffer.ByteBuf data) {
      credits.add(stream.credit());
      io.millrace.core.StreamListener sender =
          new io.millrace.core.StreamListener() {
            private int sent;
            private long seen = stream.credit();

            @Override
            public void onReady(io.millrace.core.Stream s) {
              if (s.credit() > seen) {
                credits.add(s.credit());
              }
              while (sent < total && s.isReady()) {
                sent++;
                s.next(null, io.netty.buffer.Unpooled.wrappedBuffer(new byte[] {(byte) sent}));
              }
              seen = s.credit();
              if (sent == total && !s.isOutboundDone()) {
                s.complete();
              }
            }
          };
      sender.onReady(stream);
      return sender;
    }
  }

  @Test
  void aChannelStartedAfterTheClientShutDown_doesNotHoldItsProducerForEver() throws Exception {
    connect(StreamsOptions.DEFAULT);
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    client.shutdownNow();
    assertThat(client.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    java.util.concurrent.CompletableFuture<Throwable> told =
        new java.util.concurrent.CompletableFuture<>();
    io.millrace.observer.ClientCallStreamObserver<Payload> requests =
        io.millrace.observer.ObserverRequester.of(c)
            .requestChannel(
                new StreamObserver<Payload>() {
                  @Override
                  public void onNext(Payload p) {
                    p.release();
                  }

                  @Override
                  public void onError(Throwable t) {
                    told.complete(t);
                  }

                  @Override
                  public void onCompleted() {
                    told.complete(null);
                  }
                });
    org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
        java.time.Duration.ofSeconds(10),
        () -> {
          for (int i = 0; i < 1_000; i++) { // well past what may wait
            requests.onNext(Behaviour.pooled(Integer.toString(i)));
          }
        });
    assertThat(told.get(10, TimeUnit.SECONDS)).isNotNull(); // the responses failed
  }

  @Test
  void aChannelCancelledWhileItsHandlerStarts_tellsTheRequestObserverTheCancel_notTheFirstValue()
      throws Exception {
    java.util.concurrent.BlockingQueue<String> seen =
        new java.util.concurrent.LinkedTransferQueue<>();
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    ObserverHandler slowToStart =
        new ObserverHandler() {
          @Override
          public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
            started.countDown();
            ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!out.isCancelled() && System.nanoTime() < until) {
              Thread.onSpinWait(); // (on the handler executor, not a loop)
            }
            seen.add("handler saw the cancel: " + out.isCancelled());
            return new StreamObserver<Payload>() {
              @Override
              public void onNext(Payload p) {
                seen.add("onNext " + p.dataUtf8());
                p.release();
              }

              @Override
              public void onError(Throwable t) {
                seen.add("onError");
              }

              @Override
              public void onCompleted() {
                seen.add("onCompleted");
              }
            };
          }
        };
    server =
        Server.millrace(
            ObserverResponder.of(
                slowToStart, StreamsOptions.builder().handlerExecutor(executor).build()));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    reactor.core.Disposable call =
        Flux.from(
                ReactorRequester.of(c)
                    .requestChannel(Flux.just(Payload.of("first")).concatWith(Flux.never())))
            .subscribe(Payload::release, e -> {});
    // The handler has started and waits (a call cancelled before a thread takes it is not run).
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    call.dispose();
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("handler saw the cancel: true");
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("onError");
    Thread.sleep(100);
    assertThat(seen).isEmpty();
  }

  @Test
  void aRequestObserverThatThrows_hearsOneOnError_theException() throws Exception {
    java.util.concurrent.BlockingQueue<String> seen =
        new java.util.concurrent.LinkedTransferQueue<>();
    ObserverHandler throwing =
        new ObserverHandler() {
          @Override
          public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
            return new StreamObserver<Payload>() {
              @Override
              public void onNext(Payload p) {
                throw new IllegalStateException("cannot take " + p.dataUtf8());
              }

              @Override
              public void onError(Throwable t) {
                seen.add("onError " + t.getMessage());
              }

              @Override
              public void onCompleted() {
                seen.add("onCompleted");
              }
            };
          }
        };
    server = Server.millrace(ObserverResponder.of(throwing));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    Flux.from(
            ReactorRequester.of(c)
                .requestChannel(Flux.just(Payload.of("first")).concatWith(Flux.never())))
        .subscribe(Payload::release, e -> {});
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("onError cannot take first");
    Thread.sleep(200); // (a second onError came at once, before this fix)
    assertThat(seen).isEmpty();
  }

  @Test
  void anOnCancelHandlerSetAfterTheCancel_runs_inAStreamAndInAUnaryCall() throws Exception {
    java.util.concurrent.BlockingQueue<String> seen =
        new java.util.concurrent.LinkedTransferQueue<>();
    java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(2);
    ObserverHandler slowFirstStep =
        new ObserverHandler() {
          @Override
          public void requestStream(Payload payload, StreamObserver<Payload> responses) {
            settingTheHandlerLate("stream", responses);
          }

          @Override
          public void requestResponse(Payload payload, StreamObserver<Payload> response) {
            settingTheHandlerLate("unary", response);
          }

          /** Waits for the cancel (a slow first step), then sets the handler and sends. */
          private void settingTheHandlerLate(String call, StreamObserver<Payload> responses) {
            ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
            seen.add(call + " started");
            try {
              assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
              long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
              while (!out.isCancelled() && System.nanoTime() < until) {
                Thread.sleep(1); // the CANCEL frame is on its way
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            out.setOnCancelHandler(() -> seen.add(call + " on-cancel handler"));
            out.onNext(Payload.of("dropped, not thrown: a handler is set"));
          }
        };
    server =
        Server.millrace(
            ObserverResponder.of(
                slowFirstStep, StreamsOptions.builder().handlerExecutor(executor).build()));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    ReactorRequester r =
        ReactorRequester.of(client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS));
    reactor.core.Disposable stream = r.requestStream(Payload.of("go")).subscribe();
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("stream started");
    stream.dispose();
    cancelled.countDown();
    reactor.core.Disposable unary = r.requestResponse(Payload.of("go")).subscribe();
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("unary started");
    unary.dispose();
    cancelled.countDown();
    java.util.List<String> ran = new java.util.ArrayList<>();
    for (int i = 0; i < 2; i++) {
      ran.add(seen.poll(10, TimeUnit.SECONDS));
    }
    assertThat(ran)
        .containsExactlyInAnyOrder("stream on-cancel handler", "unary on-cancel handler");
    Thread.sleep(100); // once each
    assertThat(seen).isEmpty();
  }

  @Test
  void aHandlerSendingLargeValuesToAReaderThatStopped_isHeldAfterAboutAMebibyteOfThem()
      throws Exception {
    ObserverHandler large =
        new ObserverHandler() {
          @Override
          public void requestStream(Payload payload, StreamObserver<Payload> responses) {
            ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
            byte[] chunk = new byte[64 * 1024];
            for (int i = 0; i < 1_000 && !out.isCancelled(); i++) {
              io.netty.buffer.ByteBuf b =
                  io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(chunk.length);
              out.onNext(Payload.of(b.writeBytes(chunk)));
              sent.incrementAndGet();
            }
            out.onCompleted();
          }
        };
    server =
        Server.millrace(
            ObserverResponder.of(
                large, StreamsOptions.builder().handlerExecutor(executor).build()));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    ReactorRequester r =
        ReactorRequester.of(client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS));
    reactor.core.publisher.BaseSubscriber<Payload> readsOne =
        new reactor.core.publisher.BaseSubscriber<>() {
          @Override
          protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
            s.request(1); // and no more: a reader that stopped
          }
        };
    r.requestStream(Payload.of("go")).subscribe(readsOne);
    // Until the handler is held: it has sent, and nothing more for half a second (one quiet
    // sample could be a slow machine's pause before the first send or between two).
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    for (int quiet = 0; quiet < 5 && System.nanoTime() < until; ) {
      long before = sent.get();
      Thread.sleep(100);
      quiet = before >= 2 && sent.get() == before ? quiet + 1 : 0;
    }
    // The reader's credit (its demand and about a mebibyte of prefetch), the sink's window and
    // what waits in the call (about a mebibyte each by size): some forty, where counts of 256 let
    // 273 (17 MiB) through.
    assertThat(sent.get()).isBetween(2L, 100L);
    readsOne.dispose();
  }

  @Test
  void aRequestObserverGivenAfterTheCallWasCancelled_hearsOnError() throws Exception {
    io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
    try {
      java.util.concurrent.BlockingQueue<String> seen =
          new java.util.concurrent.LinkedTransferQueue<>();
      io.millrace.observer.internal.ObserverCall<Payload, Payload> call =
          new io.millrace.observer.internal.ObserverCall<>(
              loop, io.millrace.observer.internal.ObserverCall.PAYLOADS, 16, true, false);
      // A call that ended before its answer was subscribed: subscribed only to be cancelled, its
      // handler still runs and gives its request observer.
      io.millrace.streams.internal.Payloads.cancelUnread(
          call.serving(
              () ->
                  call.receiveWith(
                      new StreamObserver<>() {
                        @Override
                        public void onNext(Payload value) {
                          seen.add("onNext");
                        }

                        @Override
                        public void onError(Throwable t) {
                          seen.add("onError " + t.getMessage());
                        }

                        @Override
                        public void onCompleted() {
                          seen.add("onCompleted");
                        }
                      })));
      assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("onError the call was cancelled");
      Thread.sleep(50);
      assertThat(seen).isEmpty();
    } finally {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  @Test
  void aBeforeStartThatThrows_refusesTheCall_andReleasesItsPayload() throws Exception {
    connect(StreamsOptions.DEFAULT);
    io.millrace.observer.ObserverRequester observer =
        io.millrace.observer.ObserverRequester.of(
            client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS));
    io.millrace.observer.ClientResponseObserver<Payload, Payload> refusing =
        new io.millrace.observer.ClientResponseObserver<>() {
          @Override
          public void beforeStart(io.millrace.observer.ClientCallStreamObserver<Payload> call) {
            throw new IllegalStateException("not now");
          }

          @Override
          public void onNext(Payload value) {}

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
    io.netty.buffer.ByteBuf unary = Behaviour.pooled("unary").data();
    assertThatThrownBy(() -> observer.requestResponse(Payload.of(unary), refusing))
        .hasMessage("not now");
    io.netty.buffer.ByteBuf stream = Behaviour.pooled("stream").data();
    assertThatThrownBy(() -> observer.requestStream(Payload.of(stream), refusing))
        .hasMessage("not now");
    assertThat(unary.refCnt()).isZero();
    assertThat(stream.refCnt()).isZero();
  }

  @Test
  void aResponderReadingByHand_getsTheOpeningValueAndThenOnlyWhatItAsks() throws Exception {
    java.util.concurrent.BlockingQueue<String> seen =
        new java.util.concurrent.LinkedTransferQueue<>();
    java.util.concurrent.atomic.AtomicReference<ServerCallStreamObserver<Payload>> call =
        new java.util.concurrent.atomic.AtomicReference<>();
    ObserverHandler byHand =
        new ObserverHandler() {
          @Override
          public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
            ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
            out.disableAutoInboundFlowControl();
            call.set(out);
            return new StreamObserver<Payload>() {
              @Override
              public void onNext(Payload p) {
                seen.add(p.dataUtf8());
                p.release();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            };
          }
        };
    server = Server.millrace(ObserverResponder.of(byHand));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    reactor.core.Disposable channel =
        Flux.from(
                ReactorRequester.of(c)
                    .requestChannel(
                        Flux.range(0, 10)
                            .map(i -> Payload.of(Integer.toString(i)))
                            .concatWith(Flux.never())))
            .subscribe(Payload::release, e -> {});
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("0"); // came with REQUEST_CHANNEL
    Thread.sleep(200);
    assertThat(seen).as("nothing it did not ask for").isEmpty();
    call.get().request(2);
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("1");
    assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("2");
    Thread.sleep(200);
    assertThat(seen).isEmpty();
    channel.dispose();
  }

  @Test
  void cancellingABidiCallAfterItsResponsesEnded_endsItsRequestHalf_fromAThread() throws Exception {
    cancelAfterTheResponsesEnded(false);
  }

  @Test
  void cancellingABidiCallAfterItsResponsesEnded_endsItsRequestHalf_fromOnCompleted()
      throws Exception {
    cancelAfterTheResponsesEnded(true);
  }

  /**
   * gRPC-style code that cancels a bidi call once its responses completed (harmless in gRPC): the
   * request half ends, so the stream does not hold one of the peer's stream slots for ever.
   */
  private void cancelAfterTheResponsesEnded(boolean insideOnCompleted) throws Exception {
    java.util.concurrent.CountDownLatch responderSawTheEnd =
        new java.util.concurrent.CountDownLatch(1);
    server =
        Server.millrace(
            io.millrace.reactor.ReactorResponder.of(
                new io.millrace.reactor.ReactorHandler() {
                  @Override
                  public Flux<Payload> requestChannel(Payload first, Flux<Payload> inbound) {
                    first.release();
                    inbound
                        .doOnNext(Payload::release)
                        .doFinally(signal -> responderSawTheEnd.countDown())
                        .subscribe(p -> {}, e -> {});
                    return Flux.just(Payload.of("only"));
                  }
                }));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    java.util.concurrent.CompletableFuture<Void> completed =
        new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.atomic.AtomicReference<
            io.millrace.observer.ClientCallStreamObserver<Payload>>
        call = new java.util.concurrent.atomic.AtomicReference<>();
    io.millrace.observer.ClientCallStreamObserver<Payload> requests =
        io.millrace.observer.ObserverRequester.of(c)
            .requestChannel(
                new StreamObserver<Payload>() {
                  @Override
                  public void onNext(Payload p) {
                    p.release();
                  }

                  @Override
                  public void onError(Throwable t) {
                    completed.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    if (insideOnCompleted) {
                      call.get().cancel("done", null);
                    }
                    completed.complete(null);
                  }
                });
    call.set(requests);
    requests.onNext(Payload.of("a"));
    completed.get(10, TimeUnit.SECONDS);
    Thread.sleep(100);
    if (!insideOnCompleted) {
      assertThat(c.activeStreams()).as("half open").isOne();
      requests.cancel("done", null);
    }
    assertThat(responderSawTheEnd.await(10, TimeUnit.SECONDS)).isTrue();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (c.activeStreams() != 0 && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertThat(c.activeStreams()).isZero();
  }
}
