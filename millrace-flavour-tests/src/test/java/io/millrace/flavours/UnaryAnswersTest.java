package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.StreamErrorException;
import io.millrace.mutiny.MutinyHandler;
import io.millrace.mutiny.MutinyResponder;
import io.millrace.mutiny.internal.UniPayloadAnswer;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.observer.internal.UnaryObserver;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.reactor.internal.MonoAnswer;
import io.millrace.rxjava.RxJavaHandler;
import io.millrace.rxjava.RxJavaResponder;
import io.millrace.rxjava.internal.SingleAnswer;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.millrace.streams.internal.Scalar;
import io.millrace.testing.SignalRecorder;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.core.SingleObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * The Reactor, RxJava and Mutiny responders' request-response answers, a {@code Mono}, a {@code
 * Single} or a {@code Uni} observed directly ({@link MonoAnswer}, {@link SingleAnswer}, {@link
 * UniPayloadAnswer}): each kind of answer, known at once or later, is subscribed once and gives its
 * outcome; an answer there at once is handed over as known; the caller's cancel reaches the
 * handler's work; and a response that comes after the cancel is released.
 */
class UnaryAnswersTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void rxJava_eachKindOfAnswer_isSubscribedOnce_withItsOutcome() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    AtomicInteger called = new AtomicInteger();
    ReactorRequester requester =
        connect(
            RxJavaResponder.of(
                new RxJavaHandler() {
                  @Override
                  public Single<Payload> requestResponse(Payload payload) {
                    String kind = text(payload);
                    Single<Payload> answer =
                        switch (kind) {
                          case "callable" ->
                              Single.fromCallable(
                                  () -> Payload.of("call " + called.incrementAndGet()));
                          case "later" ->
                              Single.timer(5, TimeUnit.MILLISECONDS).map(t -> Payload.of("later"));
                          case "failing" ->
                              Single.fromCallable(
                                  () -> {
                                    throw new IllegalStateException("no");
                                  });
                          case "error" -> Single.error(StreamErrorException.application("refused"));
                          default -> Single.just(Payload.of("just " + kind));
                        };
                    return answer.doOnSubscribe(d -> subscribed.incrementAndGet());
                  }
                }));
    assertThat(answer(requester, "callable")).isEqualTo("call 1");
    assertThat(answer(requester, "callable")).isEqualTo("call 2");
    assertThat(answer(requester, "x")).isEqualTo("just x");
    assertThat(answer(requester, "later")).isEqualTo("later");
    assertThatThrownBy(() -> answer(requester, "failing"))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("the handler failed"); // its exception's text stays on the server
    assertThatThrownBy(() -> answer(requester, "error"))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
    assertThat(subscribed).hasValue(6);
  }

  @Test
  void mutiny_eachKindOfAnswer_isSubscribedOnce_withItsOutcome() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    AtomicInteger called = new AtomicInteger();
    ReactorRequester requester =
        connect(
            MutinyResponder.of(
                new MutinyHandler() {
                  @Override
                  public Uni<Payload> requestResponse(Payload payload) {
                    String kind = text(payload);
                    Uni<Payload> answer =
                        switch (kind) {
                          case "supplier" ->
                              Uni.createFrom()
                                  .item(() -> Payload.of("supply " + called.incrementAndGet()));
                          case "later" ->
                              Uni.createFrom()
                                  .item(Payload.of("later"))
                                  .onItem()
                                  .delayIt()
                                  .by(Duration.ofMillis(5));
                          case "empty" -> Uni.createFrom().nullItem();
                          case "error" ->
                              Uni.createFrom().failure(StreamErrorException.application("refused"));
                          default -> Uni.createFrom().item(Payload.of("item " + kind));
                        };
                    return answer.onSubscription().invoke(s -> subscribed.incrementAndGet());
                  }
                }));
    assertThat(answer(requester, "supplier")).isEqualTo("supply 1");
    assertThat(answer(requester, "supplier")).isEqualTo("supply 2");
    assertThat(answer(requester, "x")).isEqualTo("item x");
    assertThat(answer(requester, "later")).isEqualTo("later");
    assertThat(answer(requester, "empty")).isNull();
    assertThatThrownBy(() -> answer(requester, "error"))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
    assertThat(subscribed).hasValue(6);
  }

  @Test
  void reactor_aMonoNotKnownAtOnce_isSubscribedOnce_withItsOutcome() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    ReactorRequester requester =
        connect(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Payload> requestResponse(Payload payload) {
                    String kind = text(payload);
                    Mono<Payload> answer =
                        switch (kind) {
                          case "later" ->
                              Mono.delay(Duration.ofMillis(5)).map(t -> Payload.of("later"));
                          case "empty" -> Mono.<Payload>empty().map(p -> p);
                          case "failing" ->
                              Mono.just(kind)
                                  .map(
                                      k -> {
                                        throw StreamErrorException.application("refused " + k);
                                      });
                          default -> Mono.just(kind).map(k -> Payload.of("mapped " + k));
                        };
                    return answer.doOnSubscribe(s -> subscribed.incrementAndGet());
                  }
                }));
    assertThat(answer(requester, "x")).isEqualTo("mapped x");
    assertThat(answer(requester, "later")).isEqualTo("later");
    assertThat(answer(requester, "empty")).isNull();
    assertThatThrownBy(() -> answer(requester, "failing"))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused failing");
    assertThat(subscribed).hasValue(4);
  }

  @Test
  void theCallersCancel_reachesTheHandlersWork_inEachFlavour() throws Exception {
    CountDownLatch rxStarted = new CountDownLatch(1);
    CountDownLatch rxDisposed = new CountDownLatch(1);
    CountDownLatch mutinyStarted = new CountDownLatch(1);
    CountDownLatch mutinyCancelled = new CountDownLatch(1);
    ReactorRequester rx =
        connect(
            RxJavaResponder.of(
                new RxJavaHandler() {
                  @Override
                  public Single<Payload> requestResponse(Payload payload) {
                    payload.release();
                    return Single.<Payload>never()
                        .doOnSubscribe(d -> rxStarted.countDown())
                        .doOnDispose(rxDisposed::countDown);
                  }
                }));
    ReactorRequester mutiny =
        connect(
            MutinyResponder.of(
                new MutinyHandler() {
                  @Override
                  public Uni<Payload> requestResponse(Payload payload) {
                    payload.release();
                    return Uni.createFrom()
                        .<Payload>nothing()
                        .onSubscription()
                        .invoke(s -> mutinyStarted.countDown())
                        .onCancellation()
                        .invoke(mutinyCancelled::countDown);
                  }
                }));
    CountDownLatch reactorStarted = new CountDownLatch(1);
    CountDownLatch reactorCancelled = new CountDownLatch(1);
    ReactorRequester reactor =
        connect(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Payload> requestResponse(Payload payload) {
                    payload.release();
                    return Mono.<Payload>never()
                        .doOnSubscribe(s -> reactorStarted.countDown())
                        .doOnCancel(reactorCancelled::countDown);
                  }
                }));
    reactor.core.Disposable c = reactor.requestResponse(Payload.of("x")).subscribe();
    assertThat(reactorStarted.await(10, TimeUnit.SECONDS)).isTrue();
    c.dispose();
    assertThat(reactorCancelled.await(10, TimeUnit.SECONDS)).as("the Mono cancelled").isTrue();
    reactor.core.Disposable a = rx.requestResponse(Payload.of("x")).subscribe();
    reactor.core.Disposable b = mutiny.requestResponse(Payload.of("x")).subscribe();
    assertThat(rxStarted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(mutinyStarted.await(10, TimeUnit.SECONDS)).isTrue();
    a.dispose();
    b.dispose();
    assertThat(rxDisposed.await(10, TimeUnit.SECONDS)).as("the Single disposed").isTrue();
    assertThat(mutinyCancelled.await(10, TimeUnit.SECONDS)).as("the Uni cancelled").isTrue();
  }

  @Test
  void onAHandlerExecutor_answersAtOnceAndLater_comeBack_inBothFlavours() throws Exception {
    ExecutorService executor = Executors.newFixedThreadPool(2);
    closing.add(executor::shutdownNow);
    StreamsOptions options = StreamsOptions.builder().handlerExecutor(executor).build();
    ReactorRequester rx =
        connect(
            RxJavaResponder.of(
                new RxJavaHandler() {
                  @Override
                  public Single<Payload> requestResponse(Payload payload) {
                    String kind = text(payload);
                    return kind.equals("later")
                        ? Single.timer(5, TimeUnit.MILLISECONDS).map(t -> Payload.of("rx later"))
                        : Single.just(Payload.of("rx " + kind));
                  }
                },
                options));
    ReactorRequester mutiny =
        connect(
            MutinyResponder.of(
                new MutinyHandler() {
                  @Override
                  public Uni<Payload> requestResponse(Payload payload) {
                    String kind = text(payload);
                    Uni<Payload> now = Uni.createFrom().item(Payload.of("mutiny " + kind));
                    return kind.equals("later")
                        ? now.onItem().delayIt().by(Duration.ofMillis(5))
                        : now;
                  }
                },
                options));
    assertThat(answer(rx, "now")).isEqualTo("rx now");
    assertThat(answer(rx, "later")).isEqualTo("rx later");
    assertThat(answer(mutiny, "now")).isEqualTo("mutiny now");
    assertThat(answer(mutiny, "later")).isEqualTo("mutiny later");
  }

  @Test
  void aLibraryThatThrowsFromSubscribe_afterAnswering_hasItsAnswerReleased() {
    ByteBuf given = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    Single<Payload> broken =
        new Single<>() {
          @Override
          protected void subscribeActual(SingleObserver<? super Payload> o) {
            o.onSubscribe(Disposable.empty());
            o.onSuccess(Payload.of(given));
            throw new IllegalStateException("broken after answering");
          }
        };
    assertThatThrownBy(() -> SingleAnswer.of(broken))
        .hasRootCauseMessage("broken after answering"); // RxJava wraps it
    assertThat(given.refCnt()).isZero();

    ByteBuf givenToo = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(2);
    Uni<Payload> brokenUni =
        new AbstractUni<>() {
          @Override
          public void subscribe(UniSubscriber<? super Payload> s) {
            s.onSubscribe(() -> {});
            s.onItem(Payload.of(givenToo));
            throw new IllegalStateException("broken after answering");
          }
        };
    assertThatThrownBy(() -> UniPayloadAnswer.of(brokenUni)).hasMessage("broken after answering");
    assertThat(givenToo.refCnt()).isZero();
  }

  @Test
  void anAnswerThereAtOnce_isHandedOverAsKnown_andOneLaterIsNot() throws Exception {
    Publisher<Payload> single = SingleAnswer.of(Single.just(Payload.of("a")));
    Publisher<Payload> uni = UniPayloadAnswer.of(Uni.createFrom().item(Payload.of("b")));
    assertThat(Scalar.is(single)).isTrue();
    assertThat(Scalar.is(uni)).isTrue();
    assertThat(text(Scalar.call(single))).isEqualTo("a");
    assertThat(text(Scalar.call(uni))).isEqualTo("b");
    assertThat(Scalar.is(SingleAnswer.of(Single.never()))).isFalse();
    assertThat(Scalar.is(UniPayloadAnswer.of(Uni.createFrom().nothing()))).isFalse();
    Publisher<Payload> mapped = MonoAnswer.of(Mono.just("c").map(Payload::of));
    assertThat(Scalar.is(mapped)).isTrue();
    assertThat(text(Scalar.call(mapped))).isEqualTo("c");
    assertThat(Scalar.is(MonoAnswer.of(Mono.never()))).isFalse();
    assertThat(MonoAnswer.of(null)).isNull();
    assertThat(SingleAnswer.of(null)).isNull();
    assertThat(UniPayloadAnswer.of(null)).isNull();
  }

  @Test
  void aResponseThatComesAfterTheCancel_isReleased_inEachFlavour() {
    AtomicReference<SingleObserver<? super Payload>> observer = new AtomicReference<>();
    Single<Payload> deaf =
        new Single<>() {
          @Override
          protected void subscribeActual(SingleObserver<? super Payload> o) {
            o.onSubscribe(Disposable.empty()); // ignores dispose: answers all the same
            observer.set(o);
          }
        };
    AtomicReference<UniSubscriber<? super Payload>> subscriber = new AtomicReference<>();
    Uni<Payload> deafUni =
        new AbstractUni<>() {
          @Override
          public void subscribe(UniSubscriber<? super Payload> s) {
            s.onSubscribe(() -> {});
            subscriber.set(s);
          }
        };
    Function<Publisher<Payload>, Runnable> cancelling =
        answer -> {
          SignalRecorder<Payload> r = new SignalRecorder<>(1);
          answer.subscribe(r);
          return () -> r.subscription.cancel();
        };
    AtomicReference<CoreSubscriber<? super Payload>> monoSubscriber = new AtomicReference<>();
    Mono<Payload> deafMono =
        new Mono<>() {
          @Override
          public void subscribe(CoreSubscriber<? super Payload> s) {
            s.onSubscribe(Operators.emptySubscription()); // ignores cancel: answers all the same
            monoSubscriber.set(s);
          }
        };
    cancelling.apply(MonoAnswer.of(deafMono)).run();
    ByteBuf lateMono = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(3);
    monoSubscriber.get().onNext(Payload.of(lateMono));
    assertThat(lateMono.refCnt()).isZero();
    cancelling.apply(SingleAnswer.of(deaf)).run();
    cancelling.apply(UniPayloadAnswer.of(deafUni)).run();
    ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    ByteBuf lateToo = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(2);
    observer.get().onSuccess(Payload.of(late));
    subscriber.get().onItem(Payload.of(lateToo));
    assertThat(late.refCnt()).isZero();
    assertThat(lateToo.refCnt()).isZero();
  }

  private static String text(Payload p) {
    try {
      return p.data().toString(StandardCharsets.UTF_8);
    } finally {
      p.release();
    }
  }

  private static String answer(ReactorRequester requester, String request) {
    Payload p = requester.requestResponse(Payload.of(request)).block(WAIT);
    return p == null ? null : text(p);
  }

  private ReactorRequester connect(Responder responder) throws Exception {
    Server server = Server.millrace(responder);
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    Connection connection = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    return ReactorRequester.of(connection);
  }

  @Test
  void reactor_anOnLastOperatorHook_seesTheAnswersSubscription() throws Exception {
    AtomicInteger hooked = new AtomicInteger();
    Hooks.onLastOperator(
        "unary-answers-test",
        Operators.lift(
            (scannable, subscriber) -> {
              hooked.incrementAndGet();
              return subscriber;
            }));
    try {
      Publisher<Payload> answer = MonoAnswer.of(Mono.just("d").map(Payload::of));
      assertThat(hooked).hasValue(1);
      assertThat(text(Scalar.call(answer))).isEqualTo("d");
    } finally {
      Hooks.resetOnLastOperator("unary-answers-test");
    }
  }

  @Test
  void reactor_aKnownPayloadSubscribedButNeverAskedFor_isReleased() {
    ByteBuf known = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    Publisher<Payload> answer = MonoAnswer.of(Mono.just(Payload.of(known)));
    SignalRecorder<Payload> r = new SignalRecorder<>(0); // the stream was not ready: no request
    answer.subscribe(r);
    r.subscription.cancel();
    assertThat(known.refCnt()).isZero();
  }

  @Test
  void observer_aSecondResponse_andOneAfterTheEnd_areReleased() throws Exception {
    ByteBuf first = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    ByteBuf second = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(2);
    ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(3);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Publisher<Payload> answer =
        UnaryObserver.<Payload>answer(
            true,
            ImmediateEventExecutor.INSTANCE,
            ObserverCall.PAYLOADS,
            response -> {
              response.onNext(Payload.of(first));
              response.onNext(Payload.of(second)); // a unary call ended with its first
              response.onCompleted();
              try {
                response.onNext(Payload.of(late));
              } catch (IllegalStateException e) {
                thrown.set(e);
              }
            });
    assertThat(second.refCnt()).isZero();
    assertThat(late.refCnt()).isZero();
    assertThat(thrown.get()).hasMessageContaining("after onCompleted");
    assertThat(Scalar.is(answer)).isTrue();
    Scalar.call(answer).release();
    assertThat(first.refCnt()).isZero();
  }

  @Test
  void observer_aHandlerWhoseCallWasCancelledBeforeItRan_stillRuns_andSeesIt() {
    ByteBuf request = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    ByteBuf response = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(2);
    AtomicReference<Boolean> sawCancelled = new AtomicReference<>();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Payload req = Payload.of(request);
    Publisher<Payload> answer =
        UnaryObserver.<Payload>answer(
            false, // as on a handler executor: run when the layer subscribes
            ImmediateEventExecutor.INSTANCE,
            ObserverCall.PAYLOADS,
            observer -> {
              req.release();
              sawCancelled.set(observer.isCancelled());
              try {
                observer.onNext(Payload.of(response));
              } catch (StreamErrorException e) {
                thrown.set(e);
              }
            });
    answer.subscribe(
        new SignalRecorder<>(0) {
          @Override
          public void onSubscribe(org.reactivestreams.Subscription s) {
            super.onSubscribe(s);
            s.cancel(); // the peer's cancel came while the request waited for a thread
          }
        });
    assertThat(sawCancelled.get()).isTrue();
    assertThat(thrown.get()).isInstanceOf(StreamErrorException.class);
    assertThat(request.refCnt()).isZero();
    assertThat(response.refCnt()).isZero();
  }

  @Test
  void observer_anErrorThrownAfterAnswering_releasesTheAnswer_andGoesOn() {
    ByteBuf given = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    assertThatThrownBy(
            () ->
                UnaryObserver.<Payload>answer(
                    true,
                    ImmediateEventExecutor.INSTANCE,
                    ObserverCall.PAYLOADS,
                    response -> {
                      response.onNext(Payload.of(given));
                      throw new AssertionError("after answering");
                    }))
        .isInstanceOf(AssertionError.class);
    assertThat(given.refCnt()).isZero();
  }

  @Test
  void reactor_aSecondOnSubscribe_isCancelled_andTheFirstKept() {
    List<String> first = new CopyOnWriteArrayList<>();
    List<String> second = new CopyOnWriteArrayList<>();
    Mono<Payload> twice =
        new Mono<>() {
          @Override
          public void subscribe(CoreSubscriber<? super Payload> s) {
            s.onSubscribe(recording(first));
            s.onSubscribe(recording(second)); // a source that breaks rule 2.12
          }
        };
    Publisher<Payload> answer = MonoAnswer.of(twice);
    assertThat(second).containsExactly("cancel");
    answer.subscribe(new SignalRecorder<>(1));
    ((org.reactivestreams.Subscription) answer).cancel();
    assertThat(first).containsExactly("request", "cancel"); // the first stays, and is cancelled
  }

  @Test
  void anErrorFromAHandlerRunOnSubscribe_cancelsTheAnswer_andGoesOn() {
    AtomicInteger cancels = new AtomicInteger();
    Publisher<Payload> late =
        UnaryObserver.<Payload>answer(
            false,
            ImmediateEventExecutor.INSTANCE,
            ObserverCall.PAYLOADS,
            observer -> {
              observer.setOnCancelHandler(cancels::incrementAndGet);
              throw new AssertionError("broken on subscribe");
            });
    assertThatThrownBy(() -> late.subscribe(new SignalRecorder<>(1)))
        .isInstanceOf(AssertionError.class);
    assertThat(cancels).as("the answer was cancelled").hasValue(1);
  }

  @Test
  void observer_anInvalidRequestInsideOnSubscribe_stillRunsTheHandler_whichSeesItCancelled() {
    ByteBuf request = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    Payload req = Payload.of(request);
    AtomicReference<Boolean> sawCancelled = new AtomicReference<>();
    Publisher<Payload> answer =
        UnaryObserver.<Payload>answer(
            false,
            ImmediateEventExecutor.INSTANCE,
            ObserverCall.PAYLOADS,
            observer -> {
              req.release();
              sawCancelled.set(observer.isCancelled());
            });
    SignalRecorder<Payload> invalid =
        new SignalRecorder<>(0) {
          @Override
          public void onSubscribe(org.reactivestreams.Subscription s) {
            super.onSubscribe(s);
            s.request(0);
          }
        };
    answer.subscribe(invalid);
    assertThat(invalid.signals).singleElement().asString().contains("rule 3.9");
    assertThat(sawCancelled.get()).isTrue();
    assertThat(request.refCnt()).isZero();
  }

  private static org.reactivestreams.Subscription recording(List<String> calls) {
    return new org.reactivestreams.Subscription() {
      @Override
      public void request(long n) {
        calls.add("request");
      }

      @Override
      public void cancel() {
        calls.add("cancel");
      }
    };
  }
}
