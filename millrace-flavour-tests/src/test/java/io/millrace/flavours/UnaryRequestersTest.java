package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.mutiny.MutinyRequester;
import io.millrace.mutiny.internal.AnswerUni;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ClientResponseObserver;
import io.millrace.observer.ObserverRequester;
import io.millrace.observer.StreamObserver;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorResponder;
import io.millrace.rxjava.RxJavaRequester;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.observers.TestObserver;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;

/**
 * The Mutiny, RxJava and StreamObserver requesters' request-response ({@code AnswerUni}; RxJava's
 * {@code single()} over the call's Publisher; {@code OneResponse}, or an {@code ObserverCall} for a
 * {@code ClientResponseObserver}): the answer, an empty answer (a null item; {@code
 * Payload.empty()}), a failure, a cancel that reaches the responder, one subscriber per call, and a
 * new call per subscription for the Supplier forms.
 */
class UnaryRequestersTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final AtomicInteger calls = new AtomicInteger();
  private final CountDownLatch cancelled = new CountDownLatch(1);

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void mutiny_theAnswer_anEmptyAnswer_andAFailure() throws Exception {
    MutinyRequester requester = MutinyRequester.of(connect());
    assertThat(text(requester.requestResponse(Payload.of("echo")).await().atMost(WAIT)))
        .isEqualTo("echo");
    assertThat(requester.requestResponse(Payload.of("empty")).await().atMost(WAIT)).isNull();
    assertThatThrownBy(() -> requester.requestResponse(Payload.of("fail")).await().atMost(WAIT))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
  }

  @Test
  void mutiny_aCancelBeforeTheAnswer_reachesTheResponder() throws Exception {
    MutinyRequester requester = MutinyRequester.of(connect());
    UniAssertSubscriber<Payload> s =
        requester
            .requestResponse(Payload.of("never"))
            .subscribe()
            .withSubscriber(new UniAssertSubscriber<>());
    awaitCalls(1);
    s.cancel();
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the responder's Mono cancelled").isTrue();
  }

  @Test
  void mutiny_aCallHasOneSubscriber_andTheSupplierFormMakesACallPerSubscription() throws Exception {
    MutinyRequester requester = MutinyRequester.of(connect());
    Uni<Payload> once = requester.requestResponse(Payload.of("echo"));
    assertThat(text(once.await().atMost(WAIT))).isEqualTo("echo");
    assertThatThrownBy(() -> once.await().atMost(WAIT)).hasMessageContaining("one subscriber");

    AtomicInteger made = new AtomicInteger();
    Uni<Payload> each =
        requester.requestResponse(() -> Payload.of("echo " + made.incrementAndGet()));
    assertThat(text(each.await().atMost(WAIT))).isEqualTo("echo 1");
    assertThat(text(each.await().atMost(WAIT))).isEqualTo("echo 2");
  }

  @Test
  void rxJava_theAnswer_anEmptyAnswer_andAFailure() throws Exception {
    RxJavaRequester requester = RxJavaRequester.of(connect());
    assertThat(text(requester.requestResponse(Payload.of("echo")).blockingGet())).isEqualTo("echo");
    Payload empty = requester.requestResponse(Payload.of("empty")).blockingGet();
    assertThat(empty.data().readableBytes()).isZero();
    assertThatThrownBy(() -> requester.requestResponse(Payload.of("fail")).blockingGet())
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
  }

  @Test
  void rxJava_aDisposeBeforeTheAnswer_reachesTheResponder() throws Exception {
    RxJavaRequester requester = RxJavaRequester.of(connect());
    TestObserver<Payload> o = requester.requestResponse(Payload.of("never")).test();
    awaitCalls(1);
    o.dispose();
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the responder's Mono cancelled").isTrue();
  }

  @Test
  void rxJava_aCallHasOneSubscriber_andTheSupplierFormMakesACallPerSubscription() throws Exception {
    RxJavaRequester requester = RxJavaRequester.of(connect());
    Single<Payload> once = requester.requestResponse(Payload.of("echo"));
    assertThat(text(once.blockingGet())).isEqualTo("echo");
    assertThatThrownBy(once::blockingGet).hasMessageContaining("one subscriber");

    AtomicInteger made = new AtomicInteger();
    Single<Payload> each =
        requester.requestResponse(() -> Payload.of("echo " + made.incrementAndGet()));
    assertThat(text(each.blockingGet())).isEqualTo("echo 1");
    assertThat(text(each.blockingGet())).isEqualTo("echo 2");
  }

  @Test
  void observer_theAnswer_anEmptyAnswer_aFailure_andAnObserverThatThrows() throws Exception {
    ObserverRequester requester = ObserverRequester.of(connect());
    assertThat(observe(requester, "echo", false)).containsExactly("next echo", "completed");
    assertThat(observe(requester, "empty", false)).containsExactly("completed");
    assertThat(observe(requester, "fail", false)).singleElement().asString().contains("refused");
    assertThat(observe(requester, "echo", true)).containsExactly("error observer failed");
  }

  @Test
  void observer_aClientResponseObserverCancelsTheCall() throws Exception {
    ObserverRequester requester = ObserverRequester.of(connect());
    AtomicReference<ClientCallStreamObserver<Payload>> call = new AtomicReference<>();
    requester.requestResponse(
        Payload.of("never"),
        new ClientResponseObserver<Payload, Payload>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<Payload> c) {
            call.set(c);
          }

          @Override
          public void onNext(Payload value) {
            value.release();
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    awaitCalls(1);
    call.get().cancel("no longer wanted", null);
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the responder's Mono cancelled").isTrue();
  }

  /** The signals an observer of one call hears; {@code throwing}: its onNext throws. */
  private static List<String> observe(ObserverRequester requester, String request, boolean throwing)
      throws InterruptedException {
    List<String> heard = new CopyOnWriteArrayList<>();
    CountDownLatch end = new CountDownLatch(1);
    requester.requestResponse(
        Payload.of(request),
        new StreamObserver<>() {
          @Override
          public void onNext(Payload value) {
            String text = text(value);
            if (throwing) {
              throw new IllegalStateException("observer failed");
            }
            heard.add("next " + text);
          }

          @Override
          public void onError(Throwable t) {
            heard.add("error " + t.getMessage());
            end.countDown();
          }

          @Override
          public void onCompleted() {
            heard.add("completed");
            end.countDown();
          }
        });
    assertThat(end.await(10, TimeUnit.SECONDS)).isTrue();
    return heard;
  }

  @Test
  void mutiny_withoutAConnection_aCancelledCall_neverStarts_andALateAnswerIsReleased() {
    // A call Publisher driven by hand: what it was asked, and the subscriber to answer.
    List<String> asked = new CopyOnWriteArrayList<>();
    AtomicReference<Subscriber<? super Payload>> answerTo = new AtomicReference<>();
    Publisher<Payload> call =
        s -> {
          answerTo.set(s);
          s.onSubscribe(
              new Subscription() {
                @Override
                public void request(long n) {
                  asked.add("request " + n);
                }

                @Override
                public void cancel() {
                  asked.add("cancel");
                }
              });
        };
    UniAssertSubscriber<Payload> cancelsAtOnce =
        new UniAssertSubscriber<>() {
          @Override
          public void onSubscribe(UniSubscription subscription) {
            super.onSubscribe(subscription);
            subscription.cancel();
          }
        };
    AnswerUni.of(call).subscribe().withSubscriber(cancelsAtOnce);
    assertThat(asked).containsExactly("cancel"); // no request: the call never starts
    ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    answerTo.get().onNext(Payload.of(late));
    assertThat(late.refCnt()).as("an answer after the cancel is released").isZero();
    assertThat(cancelsAtOnce.getItem()).isNull();

    asked.clear();
    UniAssertSubscriber<Payload> empty =
        AnswerUni.of(call).subscribe().withSubscriber(new UniAssertSubscriber<>());
    assertThat(asked).containsExactly("request 1");
    answerTo.get().onComplete();
    empty.assertCompleted().assertItem(null);
  }

  private void awaitCalls(int n) throws InterruptedException {
    for (int i = 0; i < 1_000 && calls.get() < n; i++) {
      Thread.sleep(10);
    }
    assertThat(calls.get()).isEqualTo(n);
  }

  private static String text(Payload p) {
    try {
      return p.dataUtf8();
    } finally {
      p.release();
    }
  }

  private Connection connect() throws Exception {
    Server server =
        Server.millrace(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Payload> requestResponse(Payload payload) {
                    calls.incrementAndGet();
                    String text = payload.dataUtf8();
                    payload.release();
                    return switch (text) {
                      case "empty" -> Mono.empty();
                      case "fail" -> Mono.error(StreamErrorException.application("refused"));
                      case "never" -> Mono.<Payload>never().doOnCancel(cancelled::countDown);
                      default -> Mono.just(Payload.of(text));
                    };
                  }
                }));
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    return client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
  }
}
