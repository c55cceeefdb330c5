package io.millrace.rpc;

import static io.millrace.rpc.TestService.number;
import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Int32Value;
import com.google.protobuf.StringValue;
import io.millrace.streams.ReactiveRequester;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Every interaction, status, header and deadline rule, over TCP on 127.0.0.1 with native calls. */
class RpcCallsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final TestService service = new TestService();
  private RpcOverTcp tcp;
  private RpcClient rpc;

  @BeforeEach
  void start() throws Exception {
    tcp = RpcOverTcp.serve(RpcServer.builder().service(service.definition()).build());
    rpc = tcp.client();
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private static Status statusOf(Throwable t) {
    assertThat(t).isInstanceOf(StatusException.class);
    return ((StatusException) t).status();
  }

  @Test
  void unary_answers_andEachSubscriptionIsACall() {
    Mono<StringValue> call =
        Mono.from(rpc.unary(TestService.ECHO, text("hi"), CallOptions.DEFAULT));
    assertThat(call.block(WAIT)).isEqualTo(text("hi"));
    assertThat(call.block(WAIT)).isEqualTo(text("hi"));
  }

  /** A handler is told its caller's address (the far end of the connection) and that no TLS. */
  @Test
  void context_namesTheCallersAddress_andNoTlsSession() {
    for (int i = 0; i < 2; i++) { // each call's context, not only the connection's first
      StringValue answer =
          Mono.from(rpc.unary(TestService.ECHO, text("peer"), CallOptions.DEFAULT)).block(WAIT);
      assertThat(answer.getValue())
          .isEqualTo(rpc.connection().localAddress() + " tls=false")
          .startsWith("/127.0.0.1:");
    }
  }

  /**
   * A request marshaller whose encoder fails while writing into the request frame (on the loop,
   * after the call was handed over): that call fails with the status, and the connection goes on.
   */
  @Test
  void unaryRequest_thatFailsToEncodeIntoTheFrame_failsThatCallOnly() {
    ProtobufMarshaller<StringValue> real = ProtobufMarshaller.of(StringValue.getDefaultInstance());
    Marshaller<StringValue> failing =
        new Marshaller<>() {
          @Override
          public io.netty.buffer.ByteBuf serialize(
              StringValue value, io.netty.buffer.ByteBufAllocator alloc) {
            return real.serialize(value, alloc);
          }

          @Override
          public StringValue parse(io.netty.buffer.ByteBuf data) {
            return real.parse(data);
          }

          @Override
          public io.millrace.core.PayloadEncoder<StringValue> encoder() {
            return new io.millrace.core.PayloadEncoder<>() {
              @Override
              public int length(StringValue value) {
                return real.length(value);
              }

              @Override
              public void encode(
                  StringValue value, io.netty.buffer.ByteBuf out, int index, int length) {
                throw new IllegalStateException("this encoder always fails");
              }
            };
          }
        };
    MethodDescriptor<StringValue, StringValue> echo =
        MethodDescriptor.newBuilder(
                TestService.ECHO.fullName(), MethodDescriptor.Type.UNARY, failing, real)
            .build();
    assertThatThrownBy(() -> Mono.from(rpc.unary(echo, text("x"), CallOptions.DEFAULT)).block(WAIT))
        .satisfies(
            t -> {
              assertThat(statusOf(t).code()).isEqualTo(Status.Code.INTERNAL);
              assertThat(statusOf(t).message()).contains("this encoder always fails");
            });
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("next"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("next"));
  }

  /**
   * A response marshaller that throws a checked exception it does not declare (Kotlin, Lombok's
   * {@code @SneakyThrows}) while the caller parses: the unary call and the stream fail with
   * UNKNOWN, the exception as the cause, where they waited for ever, and the connection goes on.
   */
  @Test
  void aResponseThatTheCallersMarshallerFailsToParseWithACheckedException_failsTheCall() {
    java.io.IOException gone = new java.io.IOException("the parser's table was gone");
    MethodDescriptor<StringValue, StringValue> echo =
        MethodDescriptor.newBuilder(
                TestService.ECHO.fullName(),
                MethodDescriptor.Type.UNARY,
                TestService.ECHO.requestMarshaller(),
                parsingThrows(TestService.ECHO.responseMarshaller(), gone))
            .build();
    MethodDescriptor<com.google.protobuf.Int32Value, com.google.protobuf.Int32Value> count =
        MethodDescriptor.newBuilder(
                TestService.COUNT.fullName(),
                MethodDescriptor.Type.SERVER_STREAMING,
                TestService.COUNT.requestMarshaller(),
                parsingThrows(TestService.COUNT.responseMarshaller(), gone))
            .build();
    java.util.function.Consumer<Throwable> unknownFromIt =
        t -> {
          assertThat(statusOf(t).code()).isEqualTo(Status.Code.UNKNOWN);
          assertThat(t).hasCause(gone);
        };
    assertThatThrownBy(() -> Mono.from(rpc.unary(echo, text("x"), CallOptions.DEFAULT)).block(WAIT))
        .satisfies(unknownFromIt);
    assertThatThrownBy(
            () ->
                Flux.from(
                        rpc.serverStreaming(
                            count, com.google.protobuf.Int32Value.of(3), CallOptions.DEFAULT))
                    .blockLast(WAIT))
        .satisfies(unknownFromIt);
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("next"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("next"));
  }

  /** {@code real}, but its parse throws {@code thrown}, declared or not. */
  private static <T> Marshaller<T> parsingThrows(Marshaller<T> real, Throwable thrown) {
    return new Marshaller<>() {
      @Override
      public io.netty.buffer.ByteBuf serialize(T value, io.netty.buffer.ByteBufAllocator alloc) {
        return real.serialize(value, alloc);
      }

      @Override
      public T parse(io.netty.buffer.ByteBuf data) {
        return io.millrace.testing.Undeclared.thrown(thrown);
      }
    };
  }

  /** Counts every signal a unary call sends, to catch one too many as well as one too few. */
  private static final class CountingSubscriber
      implements org.reactivestreams.Subscriber<StringValue> {
    final java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.atomic.AtomicInteger nexts =
        new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.atomic.AtomicInteger ends =
        new java.util.concurrent.atomic.AtomicInteger();
    final AtomicReference<Object> last = new AtomicReference<>();
    final java.util.function.Consumer<org.reactivestreams.Subscription> asks;
    volatile org.reactivestreams.Subscription subscription;

    CountingSubscriber(long request) {
      this(s -> s.request(request));
    }

    /** One that asks, inside its onSubscribe, as {@code asks} does. */
    CountingSubscriber(java.util.function.Consumer<org.reactivestreams.Subscription> asks) {
      this.asks = asks;
    }

    @Override
    public void onSubscribe(org.reactivestreams.Subscription s) {
      subscription = s;
      asks.accept(s);
      // Anything signalled inside request() would have come before this returned: rule 1.3.
      if (ends.get() != 0 || nexts.get() != 0) {
        last.set(new AssertionError("signalled while onSubscribe ran"));
      }
    }

    @Override
    public void onNext(StringValue v) {
      nexts.incrementAndGet();
      last.compareAndSet(null, v);
    }

    @Override
    public void onError(Throwable t) {
      ends.incrementAndGet();
      last.compareAndSet(null, t);
      ended.countDown();
    }

    @Override
    public void onComplete() {
      ends.incrementAndGet();
      ended.countDown();
    }
  }

  @Test
  void unaryCalls_fromManyThreads_withDeadlines_eachSignalledExactlyOnce() throws Exception {
    java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(8);
    CallOptions withDeadline = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30));
    try {
      List<java.util.concurrent.Future<List<CountingSubscriber>>> results =
          new java.util.ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int thread = t;
        results.add(
            threads.submit(
                () -> {
                  List<CountingSubscriber> calls = new java.util.ArrayList<>();
                  for (int i = 0; i < 300; i++) {
                    CountingSubscriber c = new CountingSubscriber(1);
                    rpc.unary(TestService.ECHO, text(thread + "-" + i), withDeadline).subscribe(c);
                    calls.add(c);
                    if (i % 50 == 49) {
                      c.ended.await(10, TimeUnit.SECONDS); // bounded in flight
                    }
                  }
                  return calls;
                }));
      }
      for (int t = 0; t < 8; t++) {
        List<CountingSubscriber> calls = results.get(t).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < calls.size(); i++) {
          CountingSubscriber c = calls.get(i);
          assertThat(c.ended.await(10, TimeUnit.SECONDS)).isTrue();
          assertThat(c.last.get()).isEqualTo(text(t + "-" + i));
          assertThat(c.nexts).hasValue(1);
          assertThat(c.ends).hasValue(1);
        }
      }
      Thread.sleep(50); // a signal after the end would come now
      for (java.util.concurrent.Future<List<CountingSubscriber>> r : results) {
        for (CountingSubscriber c : r.get()) {
          assertThat(c.nexts).hasValue(1);
          assertThat(c.ends).hasValue(1);
        }
      }
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aNonPositiveRequest_failsTheCallAfterOnSubscribe_andSendsNothing() throws Exception {
    CountingSubscriber c = new CountingSubscriber(0);
    rpc.unary(TestService.ECHO, text("x"), CallOptions.DEFAULT).subscribe(c);
    assertThat(c.ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(c.last.get()).isInstanceOf(IllegalArgumentException.class);
    assertThat(c.nexts).hasValue(0);
    assertThat(c.ends).hasValue(1);
  }

  @Test
  void cancellingManyCallsInFlight_reachesTheirHandlers_andSignalsNothingAfter() throws Exception {
    // "slow" is answered only when cancelled; each cancel must reach the server's handler.
    List<CountingSubscriber> calls = new java.util.ArrayList<>();
    for (int i = 0; i < 50; i++) {
      CountingSubscriber c = new CountingSubscriber(1);
      rpc.unary(TestService.ECHO, text("slow"), CallOptions.DEFAULT).subscribe(c);
      calls.add(c);
    }
    Thread.sleep(100); // the 50 reach the server's handlers
    assertThat(service.cancels).hasValue(0);
    Thread cancelling = new Thread(() -> calls.forEach(c -> c.subscription.cancel()));
    cancelling.start();
    cancelling.join(10_000);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (service.cancels.get() < 50 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(service.cancels).hasValue(50);
    Thread.sleep(100);
    for (CountingSubscriber c : calls) {
      assertThat(c.nexts).hasValue(0);
      assertThat(c.ends).hasValue(0); // a cancelled call is not signalled
    }
    // Calls cancelled as soon as they are sent, racing their answers, leak nothing (the leak
    // detector is paranoid in tests), and the connection still works.
    for (int i = 0; i < 500; i++) {
      Mono.from(rpc.unary(TestService.ECHO, text("c" + i), CallOptions.DEFAULT))
          .subscribe()
          .dispose();
    }
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("after"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("after"));
  }

  @Test
  void callsStartedOnTheLoop_cancelledFromAnotherThread_reachTheirHandlersCancelled()
      throws Exception {
    // A call started on the event loop publishes its stream without a fence. Cancels from another
    // thread, racing the start, must reach the server: through the start's own look at the wish,
    // or through the loop's second look for the stream (with both removed this fails; the second
    // look's own window, a store not yet visible, is too short to hit).
    java.util.concurrent.ExecutorService other =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    List<CountingSubscriber> calls = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 300; i++) {
        CountingSubscriber c = new CountingSubscriber(1);
        org.reactivestreams.Publisher<StringValue> call =
            rpc.unary(TestService.ECHO, text("slow"), CallOptions.DEFAULT);
        rpc.loop().execute(() -> call.subscribe(c)); // requested inside onSubscribe, on the loop
        other
            .submit(
                () -> {
                  long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                  while (c.subscription == null && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                  }
                  c.subscription.cancel(); // races the rest of subscribe and the start
                })
            .get(10, TimeUnit.SECONDS);
        calls.add(c);
      }
    } finally {
      other.shutdownNow();
    }
    // Every call that reached the server is cancelled there; none is left waiting.
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("after"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("after"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (service.cancels.get() < service.slowCalls.get() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(service.slowCalls.get()).as("some calls were sent before their cancel").isPositive();
    assertThat(service.cancels.get()).isEqualTo(service.slowCalls.get());
    for (CountingSubscriber c : calls) {
      assertThat(c.nexts).hasValue(0);
      assertThat(c.ends).hasValue(0); // a cancelled call is not signalled
    }
  }

  @Test
  void aRequestFromAnotherThreadWhileOnSubscribeRuns_startsTheCall_whenItReturns()
      throws Exception {
    java.util.concurrent.ExecutorService other =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      CountingSubscriber c =
          new CountingSubscriber(
              s -> {
                try {
                  other.submit(() -> s.request(1)).get(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              });
      rpc.unary(TestService.ECHO, text("hi"), CallOptions.DEFAULT).subscribe(c);
      assertThat(c.ended.await(10, TimeUnit.SECONDS)).as("the call was made and ended").isTrue();
      assertThat(c.last.get()).isEqualTo(text("hi"));
      assertThat(c.nexts).hasValue(1);
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void aFailedCall_carriesCodeMessageDetailsAndTrailers() {
    AtomicReference<Headers> trailers = new AtomicReference<>();
    Mono<StringValue> call =
        Mono.from(
            rpc.unary(
                TestService.ECHO,
                text("fail:no such thing"),
                CallOptions.DEFAULT.onTrailers(trailers::set)));
    assertThatThrownBy(() -> call.block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.NOT_FOUND);
              assertThat(e.status().message()).isEqualTo("no such thing");
              assertThat(e.status().details().toStringUtf8()).isEqualTo("details");
              assertThat(e.trailers().get("x-why")).isEqualTo("asked");
            });
    assertThat(trailers.get().get("x-why")).isEqualTo("asked");
  }

  @Test
  void aHandlerThatThrows_isUnknown_withoutItsMessage() {
    Throwable t =
        Mono.from(rpc.unary(TestService.ECHO, text("throw"), CallOptions.DEFAULT))
            .onErrorResume(e -> Mono.error(e))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(t.getMessage()).doesNotContain("secret");
  }

  @Test
  void anUnknownMethod_isUnimplemented() {
    Throwable t =
        Mono.from(rpc.unary(TestService.MISSING, text("x"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(statusOf(t).message()).contains("unknown method");
  }

  @Test
  void headersGoBothWays_andTrailersCome() {
    AtomicReference<Headers> responseHeaders = new AtomicReference<>();
    AtomicReference<Headers> trailers = new AtomicReference<>();
    CallOptions options =
        CallOptions.DEFAULT
            .withHeaders(new Headers().put("x-req", "q"))
            .onHeaders(responseHeaders::set)
            .onTrailers(trailers::set);
    assertThat(Mono.from(rpc.unary(TestService.ECHO, text("headers"), options)).block(WAIT))
        .isEqualTo(text("headers"));
    assertThat(service.seenHeader.get()).isEqualTo("q");
    assertThat(responseHeaders.get().get("x-resp")).isEqualTo("h");
    assertThat(trailers.get().get("x-trail")).isEqualTo("t");
  }

  @Test
  void aDeadline_failsTheCaller_andCancelsTheHandler() throws Exception {
    CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200));
    long start = System.nanoTime();
    Throwable t =
        Mono.from(rpc.unary(TestService.ECHO, text("slow"), options))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(System.nanoTime() - start)
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(190));
    assertThat(service.cancelled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(service.cancelledWith.get().code())
        .isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
  }

  @Test
  void aZeroDeadline_failsWithoutACall() {
    Throwable t =
        Mono.from(
                rpc.unary(
                    TestService.ECHO, text("hi"), CallOptions.DEFAULT.withTimeout(Duration.ZERO)))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
  }

  @Test
  void cancellingTheCall_reachesTheHandler() throws Exception {
    Disposable call =
        Mono.from(rpc.unary(TestService.ECHO, text("slow"), CallOptions.DEFAULT)).subscribe();
    Thread.sleep(100);
    call.dispose();
    assertThat(service.cancelled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(service.cancelledWith.get().code()).isEqualTo(Status.Code.CANCELLED);
  }

  @Test
  void serverStreaming_sendsEveryResponse_thenTheStatus() {
    assertThat(
            Flux.from(rpc.serverStreaming(TestService.COUNT, number(1000), CallOptions.DEFAULT))
                .map(Int32Value::getValue)
                .collectList()
                .block(WAIT))
        .hasSize(1000)
        .startsWith(0, 1, 2)
        .endsWith(999);
    List<Object> signals =
        Flux.from(rpc.serverStreaming(TestService.COUNT, number(-3), CallOptions.DEFAULT))
            .map(v -> (Object) v.getValue())
            .onErrorResume(e -> Mono.just(statusOf(e)))
            .collectList()
            .block(WAIT);
    assertThat(signals).hasSize(4).startsWith(0, 1, 2);
    assertThat(((Status) signals.get(3)).code()).isEqualTo(Status.Code.OUT_OF_RANGE);
  }

  @Test
  void serverStreaming_followsTheCallersDemand() {
    assertThat(
            Flux.from(rpc.serverStreaming(TestService.COUNT, number(100_000), CallOptions.DEFAULT))
                .limitRate(7)
                .take(50)
                .count()
                .block(WAIT))
        .isEqualTo(50);
  }

  @Test
  void clientStreaming_andAnEmptyRequestStream() {
    assertThat(
            Mono.from(
                    rpc.clientStreaming(
                        TestService.SUM,
                        Flux.range(1, 100).map(TestService::number),
                        CallOptions.DEFAULT))
                .block(WAIT))
        .isEqualTo(number(5050));
    assertThat(
            Mono.from(rpc.clientStreaming(TestService.SUM, Flux.empty(), CallOptions.DEFAULT))
                .block(WAIT))
        .isEqualTo(number(0));
  }

  @Test
  void bidiStreaming_answersEachMessage() {
    assertThat(
            Flux.from(
                    rpc.bidiStreaming(
                        TestService.CHAT,
                        Flux.just("a", "b", "c").map(TestService::text),
                        CallOptions.DEFAULT))
                .map(StringValue::getValue)
                .collectList()
                .block(WAIT))
        .containsExactly("re: a", "re: b", "re: c");
  }

  /**
   * A channel whose second message is not the method's protobuf type: the server's request stream
   * (which parses each message straight from the receive buffer) fails the call with INTERNAL after
   * the first answer, and the connection goes on.
   */
  @Test
  void bidiStreaming_aMessageThatDoesNotParse_failsTheCallAfterWhatCameBefore() {
    ProtobufMarshaller<StringValue> real = ProtobufMarshaller.of(StringValue.getDefaultInstance());
    Marshaller<StringValue> garbling =
        new Marshaller<>() {
          @Override
          public io.netty.buffer.ByteBuf serialize(
              StringValue value, io.netty.buffer.ByteBufAllocator alloc) {
            if (!value.getValue().equals("garbled")) {
              return real.serialize(value, alloc);
            }
            // Field 1, length-delimited, 9 bytes announced and 1 given: a truncated message.
            return alloc.buffer(3).writeByte(0x0A).writeByte(9).writeByte('x');
          }

          @Override
          public StringValue parse(io.netty.buffer.ByteBuf data) {
            return real.parse(data);
          }
        };
    MethodDescriptor<StringValue, StringValue> chat =
        MethodDescriptor.newBuilder(
                TestService.CHAT.fullName(), MethodDescriptor.Type.BIDI_STREAMING, garbling, real)
            .build();
    List<String> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
    assertThatThrownBy(
            () ->
                Flux.from(
                        rpc.bidiStreaming(
                            chat,
                            Flux.just("a", "garbled", "c").map(TestService::text),
                            CallOptions.DEFAULT))
                    .doOnNext(v -> answers.add(v.getValue()))
                    .blockLast(WAIT))
        .satisfies(
            t -> {
              assertThat(statusOf(t).code()).isEqualTo(Status.Code.INTERNAL);
              assertThat(statusOf(t).message()).contains("invalid protobuf message");
            });
    assertThat(answers).containsExactly("re: a");
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("next"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("next"));
  }

  @Test
  void fireAndForget_reachesTheHandler() throws Exception {
    Mono.from(rpc.fireAndForget(TestService.LOG, text("noted"), CallOptions.DEFAULT)).block(WAIT);
    assertThat(service.logged.poll(10, TimeUnit.SECONDS)).isEqualTo("noted");
  }

  @Test
  void aDeadlineCenturiesAway_isTheLongestDeadline_notAFailure() {
    CallOptions far = CallOptions.DEFAULT.withTimeout(Duration.ofDays(365L * 1_000));
    assertThat(Mono.from(rpc.unary(TestService.ECHO, text("hi"), far)).block(WAIT))
        .isEqualTo(text("hi"));
    assertThat(
            Flux.from(rpc.serverStreaming(TestService.COUNT, number(3), far)).count().block(WAIT))
        .isEqualTo(3);
    assertThat(
            Flux.from(rpc.bidiStreaming(TestService.CHAT, Flux.just(text("a")), far))
                .map(StringValue::getValue)
                .collectList()
                .block(WAIT))
        .containsExactly("re: a");
  }

  @Test
  void anInterceptorWhoseOnResponsesReturnsNull_failsTheCall_doesNotThrow() {
    RpcClient broken =
        rpc.withInterceptors(
            new ClientInterceptor() {
              @Override
              public <T> org.reactivestreams.Publisher<T> onResponses(
                  MethodDescriptor<?, ?> method,
                  CallOptions options,
                  org.reactivestreams.Publisher<T> responses) {
                return null;
              }
            });
    Throwable t =
        Mono.from(broken.unary(TestService.ECHO, text("hi"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.UNKNOWN);
  }

  @Test
  void aRouteTooLongToEncode_failsItsCall_leaksNothing_andTheConnectionGoesOn() throws Exception {
    RpcClient routed = RpcClient.routing(connectRouting());
    String tooLong = TestService.NAME + "/" + "x".repeat(300); // a route entry holds 255 bytes
    Throwable unary =
        Mono.from(
                routed.unary(
                    method(tooLong, MethodDescriptor.Type.UNARY), text("hi"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(unary).isNotNull();
    Throwable channel =
        Flux.from(
                routed.bidiStreaming(
                    method(tooLong, MethodDescriptor.Type.BIDI_STREAMING),
                    Flux.just(text("a"), text("b")),
                    CallOptions.DEFAULT))
            .materialize()
            .blockLast(WAIT)
            .getThrowable();
    assertThat(channel).isNotNull();
    assertThat(
            Mono.from(routed.unary(TestService.ECHO, text("after"), CallOptions.DEFAULT))
                .block(WAIT))
        .isEqualTo(text("after"));
  }

  @Test
  void anUnknownMethodsLongName_comesBackShortenedInTheStatus() throws Exception {
    RpcClient routed = RpcClient.routing(connectRouting());
    String unknown = TestService.NAME + "/" + "y".repeat(200);
    Throwable t =
        Mono.from(
                routed.unary(
                    method(unknown, MethodDescriptor.Type.UNARY), text("hi"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(statusOf(t).message()).contains("(214 characters)").hasSizeLessThan(200);
  }

  private static MethodDescriptor<StringValue, StringValue> method(
      String name, MethodDescriptor.Type type) {
    return MethodDescriptor.newBuilder(
            name,
            type,
            ProtobufMarshaller.of(StringValue.getDefaultInstance()),
            ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .build();
  }

  @Test
  void routingCallers_reachTheSameMethods_andSeeStatusesAsErrorText() throws Exception {
    RpcClient routed = RpcClient.routing(connectRouting());
    assertThat(
            Mono.from(routed.unary(TestService.ECHO, text("hi"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("hi"));
    Throwable t =
        Mono.from(routed.unary(TestService.ECHO, text("fail:gone"), CallOptions.DEFAULT))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(statusOf(t).code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(statusOf(t).message()).isEqualTo("gone");
    assertThat(
            Flux.from(routed.serverStreaming(TestService.COUNT, number(5), CallOptions.DEFAULT))
                .count()
                .block(WAIT))
        .isEqualTo(5);
    assertThat(
            Flux.from(
                    routed.bidiStreaming(
                        TestService.CHAT,
                        Flux.just("x", "y").map(TestService::text),
                        CallOptions.DEFAULT))
                .map(StringValue::getValue)
                .collectList()
                .block(WAIT))
        .containsExactly("re: x", "re: y");
  }

  @Test
  void aStreamsStatus_arrivesWhenTheCallerAskedForExactlyTheMessages() {
    // Three messages then OUT_OF_RANGE; the caller asks for three and no more.
    reactor.test.StepVerifier.create(
            Flux.from(rpc.serverStreaming(TestService.COUNT, number(-3), CallOptions.DEFAULT)), 3)
        .expectNextCount(3)
        .expectErrorSatisfies(
            e -> assertThat(statusOf(e).code()).isEqualTo(Status.Code.OUT_OF_RANGE))
        .verify(WAIT);
    // And a stream that ends OK with trailers, asked for exactly its messages.
    AtomicReference<Headers> trailers = new AtomicReference<>();
    reactor.test.StepVerifier.create(
            Flux.from(
                rpc.serverStreaming(
                    TestService.TRAILED, number(2), CallOptions.DEFAULT.onTrailers(trailers::set))),
            2)
        .expectNextCount(2)
        .expectComplete()
        .verify(WAIT);
    assertThat(trailers.get().get("x-count")).isEqualTo("2");
  }

  @Test
  void aBufferedMessage_waitsForDemand_andTheEndWaitsBehindIt() {
    reactor.test.StepVerifier.create(
            Flux.from(rpc.serverStreaming(TestService.COUNT, number(3), CallOptions.DEFAULT)), 1)
        .expectNext(number(0))
        .thenAwait(Duration.ofMillis(100)) // the call's extra unit brought message 1 meanwhile
        .thenRequest(2)
        .expectNext(number(1), number(2))
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void whenTheAnswerEnds_theCallersRequestStreamIsCancelled() throws Exception {
    java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
    Flux<StringValue> endless =
        Flux.<StringValue, Long>generate(
                () -> 0L,
                (i, sink) -> {
                  sink.next(text("m" + i));
                  return i + 1;
                })
            .doOnCancel(cancelled::countDown);
    assertThat(
            Flux.from(rpc.bidiStreaming(TestService.FIRST_ONLY, endless, CallOptions.DEFAULT))
                .collectList()
                .block(WAIT))
        .containsExactly(text("m0"));
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aChannelCancelledBeforeItAsked_leaksNothing() {
    for (int i = 0; i < 50; i++) {
      Flux.from(rpc.bidiStreaming(TestService.CHAT, Flux.never(), CallOptions.DEFAULT))
          .subscribe(
              new reactor.core.publisher.BaseSubscriber<StringValue>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                  s.cancel();
                }
              });
    }
    // The leak detector (paranoid, failing the build) checks the headers made for these calls.
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("after"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("after"));
  }

  private ReactiveRequester connectRouting() throws Exception {
    return tcp.connect(Routing.COMPOSITE_MIME_TYPE);
  }
}
