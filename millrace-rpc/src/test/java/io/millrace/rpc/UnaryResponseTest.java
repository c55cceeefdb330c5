package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.streams.internal.Scalar;
import io.millrace.testing.SignalRecorder;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;

/**
 * {@link UnaryResponse} without a connection: the answer a unary observer handler gives, at once (a
 * Scalar, on the loop of a call without a deadline) or through the observer's own Publisher (a
 * handler run when the runtime subscribes, off the loop or with a deadline), and what the handler
 * sees of cancels, of a second response, of onNext after the end, and of its own exceptions.
 */
class UnaryResponseTest {
  /** A loop the tests do not run on: handlers called from the test thread run on subscription. */
  private final DefaultEventLoop loop = new DefaultEventLoop();

  @AfterEach
  void stop() throws Exception {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  private static StringValue text(String s) {
    return StringValue.of(s);
  }

  /** The answer as the runtime asks for it on the call's own loop, without a deadline. */
  private static Publisher<StringValue> onLoop(
      Consumer<ServerCallStreamObserver<StringValue>> handler) {
    return UnaryResponse.answer(TestService.echoContext(ImmediateEventExecutor.INSTANCE), handler);
  }

  /** The answer as the runtime asks for it off the call's loop (a handler executor's thread). */
  private Publisher<StringValue> offLoop(Consumer<ServerCallStreamObserver<StringValue>> handler) {
    return UnaryResponse.answer(TestService.echoContext(loop), handler);
  }

  /** Records the signals a subscriber hears, a StringValue by its value. */
  private static class Recorder extends SignalRecorder<StringValue> {
    Recorder(long initialRequest) {
      super(initialRequest);
    }

    @Override
    protected String text(StringValue item) {
      return item.getValue();
    }
  }

  private static List<String> scalarOutcome(Publisher<StringValue> p) {
    assertThat(Scalar.is(p)).as("given at once, as a Scalar").isTrue();
    Recorder r = new Recorder(0);
    Scalar.signal(p, r);
    return r.signals;
  }

  @Test
  void
      anAnswerGivenBeforeTheHandlerReturns_onTheLoop_isAScalar_ofTheResponse_theFailure_orNothing() {
    assertThat(
            scalarOutcome(
                onLoop(
                    o -> {
                      o.onNext(text("hi"));
                      o.onCompleted();
                    })))
        .containsExactly("next hi", "complete");
    assertThat(scalarOutcome(onLoop(o -> o.onNext(text("no completion yet")))))
        .containsExactly("next no completion yet", "complete");
    assertThat(
            scalarOutcome(
                onLoop(
                    o ->
                        o.onError(
                            Status.of(Status.Code.NOT_FOUND).withMessage("nope").asException()))))
        .containsExactly("error NOT_FOUND: nope");
    assertThat(scalarOutcome(onLoop(ServerCallStreamObserver::onCompleted)))
        .as("no response: the runtime fails the call with INTERNAL")
        .containsExactly("complete");
    assertThat(
            scalarOutcome(
                onLoop(
                    o -> {
                      throw new IllegalStateException("a handler's bug");
                    })))
        .containsExactly("error a handler's bug");
    assertThat(
            scalarOutcome(
                onLoop(
                    o -> {
                      o.onNext(text("first"));
                      o.onNext(text("second, dropped"));
                      throw new IllegalStateException("after the answer: the answer stands");
                    })))
        .containsExactly("next first", "complete");
  }

  @Test
  void offTheLoop_orWithADeadline_theHandlerRunsWhenTheRuntimeSubscribes() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    Consumer<ServerCallStreamObserver<StringValue>> handler =
        o -> {
          runs.incrementAndGet();
          o.onNext(text("ran"));
          o.onCompleted();
        };
    ServerContext withDeadline =
        new ServerContext(
            TestService.served(TestService.ECHO),
            Headers.EMPTY,
            5_000_000,
            ImmediateEventExecutor.INSTANCE,
            16,
            null,
            null);
    for (Publisher<StringValue> p :
        List.of(offLoop(handler), UnaryResponse.answer(withDeadline, handler))) {
      assertThat(Scalar.is(p)).isFalse();
      int before = runs.get();
      Thread.sleep(20);
      assertThat(runs.get()).as("not run before the subscription").isEqualTo(before);
      Recorder r = new Recorder(1);
      p.subscribe(r);
      assertThat(r.awaitEnd()).containsExactly("next ran", "complete");
      assertThat(runs.get()).isEqualTo(before + 1);
    }
  }

  /** As the deadline's timer would: a cancel while the handler runs reaches it. */
  @Test
  void aCancelWhileTheHandlerRuns_isSeenByIt() throws Exception {
    AtomicReference<Subscription> handle = new AtomicReference<>();
    AtomicBoolean sawCancel = new AtomicBoolean();
    AtomicReference<Throwable> onNextThrew = new AtomicReference<>();
    Publisher<StringValue> p =
        offLoop(
            o -> {
              Thread timer = new Thread(() -> handle.get().cancel());
              timer.start();
              try {
                timer.join();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
              sawCancel.set(o.isCancelled() && !o.isReady());
              try {
                o.onNext(text("too late"));
              } catch (StatusException e) {
                onNextThrew.set(e);
              }
            });
    Recorder r =
        new Recorder(1) {
          @Override
          public void onSubscribe(Subscription s) {
            handle.set(s);
            super.onSubscribe(s);
          }
        };
    p.subscribe(r);
    assertThat(sawCancel.get()).isTrue();
    assertThat(onNextThrew.get())
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.CANCELLED));
    assertThat(r.signals).as("nothing after a cancel").isEmpty();
  }

  @Test
  void onNextAfterTheEnd_throws() {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    onLoop(
        o -> {
          o.onNext(text("a"));
          o.onCompleted();
          try {
            o.onNext(text("b"));
          } catch (IllegalStateException e) {
            thrown.set(e);
          }
        });
    assertThat(thrown.get()).hasMessageContaining("after onCompleted");
  }

  @Test
  void anAnswerGivenLater_goesOutWhenAskedFor_fromTheAnsweringThread() throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = onLoop(kept::set);
    assertThat(Scalar.is(p)).isFalse();
    assertThat(kept.get().isReady()).isTrue();

    Recorder asked = new Recorder(1);
    p.subscribe(asked);
    Thread answering =
        new Thread(
            () -> {
              kept.get().onNext(text("later"));
              kept.get().onCompleted();
            });
    answering.start();
    assertThat(asked.awaitEnd()).containsExactly("next later", "complete");
    answering.join();
    assertThat(kept.get().isReady()).isFalse();
  }

  @Test
  void aResponseThatComesBeforeTheRequest_waitsForIt_andASecondSubscriberIsRefused()
      throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = onLoop(kept::set);
    Recorder late = new Recorder(0);
    p.subscribe(late);
    kept.get().onNext(text("early"));
    kept.get().onCompleted();
    assertThat(late.signals).isEmpty();
    late.subscription.request(1);
    assertThat(late.awaitEnd()).containsExactly("next early", "complete");

    Recorder second = new Recorder(1);
    p.subscribe(second);
    assertThat(second.awaitEnd()).singleElement().asString().contains("one subscriber");
  }

  @Test
  void aCancel_runsTheOnCancelHandlerOnTheLoop_andLaterResponsesAreDroppedQuietly()
      throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    CountDownLatch onCancelRan = new CountDownLatch(1);
    AtomicReference<Boolean> ranOnLoop = new AtomicReference<>();
    Publisher<StringValue> p =
        offLoop(
            o -> {
              kept.set(o);
              o.setOnCancelHandler(
                  () -> {
                    ranOnLoop.set(loop.inEventLoop());
                    onCancelRan.countDown();
                  });
            });
    Recorder cancelling = new Recorder(0);
    p.subscribe(cancelling);
    cancelling.subscription.cancel();
    assertThat(onCancelRan.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ranOnLoop.get()).isTrue();
    assertThat(kept.get().isCancelled()).isTrue();
    kept.get().onNext(text("after the cancel: dropped, no exception with an on-cancel handler"));
    kept.get().onCompleted();
    cancelling.subscription.request(1);
    Thread.sleep(50);
    assertThat(cancelling.signals).as("nothing after a cancel").isEmpty();
  }

  @Test
  void onNextAfterACancel_withoutAnOnCancelHandler_throwsCancelled() {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = onLoop(kept::set);
    Recorder r = new Recorder(0);
    p.subscribe(r);
    r.subscription.cancel();
    assertThat(kept.get().isCancelled()).isTrue();
    assertThat(kept.get().isReady()).isFalse();
    assertThatThrownBy(() -> kept.get().onNext(text("too late")))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.CANCELLED));
    assertThat(r.signals).isEmpty();
  }

  @Test
  void anInvalidRequest_failsTheSubscriber_evenFromInsideOnSubscribe() throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = onLoop(kept::set);
    Recorder r = new Recorder(0);
    p.subscribe(r);
    r.subscription.request(0);
    assertThat(r.awaitEnd()).singleElement().asString().contains("rule 3.9");
    assertThat(kept.get().isCancelled()).as("an invalid request cancels the call").isTrue();
    assertThatThrownBy(() -> kept.get().onNext(text("too late")))
        .isInstanceOf(StatusException.class);
    assertThat(r.signals).hasSize(1);

    for (Publisher<StringValue> inside :
        List.of(onLoop(o -> {}), offLoop(o -> o.onNext(text("not asked for"))))) {
      Recorder early = new Recorder(-1); // request(-1) inside onSubscribe
      inside.subscribe(early);
      assertThat(early.awaitEnd()).singleElement().asString().contains("(rule 3.9): -1");
    }
  }

  @Test
  void anOnReadyHandler_runsOnceOnTheLoop_whenTheHandlerReturnedWithoutAnAnswer() throws Exception {
    for (EventExecutor executor : List.<EventExecutor>of(ImmediateEventExecutor.INSTANCE, loop)) {
      AtomicInteger ready = new AtomicInteger();
      CountDownLatch ran = new CountDownLatch(1);
      AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
      Publisher<StringValue> p =
          UnaryResponse.answer(
              TestService.echoContext(executor),
              o -> {
                kept.set(o);
                o.setOnReadyHandler(
                    () -> {
                      ready.incrementAndGet();
                      assertThat(executor.inEventLoop()).isTrue();
                      kept.get().onNext(text("when ready"));
                      kept.get().onCompleted();
                      ran.countDown();
                    });
              });
      Recorder r = new Recorder(1);
      p.subscribe(r);
      assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(r.awaitEnd()).containsExactly("next when ready", "complete");
      assertThat(ready.get()).isEqualTo(1);
    }
  }
}
