package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.streams.internal.Scalar;
import io.netty.channel.DefaultEventLoop;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@link UnaryResponse} without a connection: the answer a unary observer handler gives, at once (a
 * Scalar) or later (the observer's own Publisher), and what the handler sees of cancels, of a
 * second response, of onNext after the end, and of its own exceptions.
 */
class UnaryResponseTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final ServerContext context = TestService.echoContext(loop);

  @AfterEach
  void stop() throws Exception {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  private static StringValue text(String s) {
    return StringValue.of(s);
  }

  private Publisher<StringValue> answer(Consumer<ServerCallStreamObserver<StringValue>> handler) {
    return UnaryResponse.answer(context, handler);
  }

  /** Records the signals a subscriber hears; requests when told to. */
  private static final class Recorder implements Subscriber<StringValue> {
    final List<String> signals = new CopyOnWriteArrayList<>();
    final CountDownLatch ended = new CountDownLatch(1);
    final long initialRequest;
    volatile Subscription subscription;

    Recorder(long initialRequest) {
      this.initialRequest = initialRequest;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      if (initialRequest > 0) {
        s.request(initialRequest);
      }
    }

    @Override
    public void onNext(StringValue v) {
      signals.add("next " + v.getValue());
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error " + t.getMessage());
      ended.countDown();
    }

    @Override
    public void onComplete() {
      signals.add("complete");
      ended.countDown();
    }

    List<String> awaitEnd() throws InterruptedException {
      assertThat(ended.await(5, TimeUnit.SECONDS)).as("the call ended").isTrue();
      return signals;
    }
  }

  private static List<String> scalarOutcome(Publisher<StringValue> p) {
    assertThat(Scalar.is(p)).as("given at once, as a Scalar").isTrue();
    Recorder r = new Recorder(0);
    Scalar.signal(p, r);
    return r.signals;
  }

  @Test
  void anAnswerGivenBeforeTheHandlerReturns_isAScalar_ofTheResponse_theFailure_orNothing() {
    assertThat(
            scalarOutcome(
                answer(
                    o -> {
                      o.onNext(text("hi"));
                      o.onCompleted();
                    })))
        .containsExactly("next hi", "complete");
    assertThat(scalarOutcome(answer(o -> o.onNext(text("no completion yet")))))
        .containsExactly("next no completion yet", "complete");
    assertThat(
            scalarOutcome(
                answer(
                    o ->
                        o.onError(
                            Status.of(Status.Code.NOT_FOUND).withMessage("nope").asException()))))
        .containsExactly("error NOT_FOUND: nope");
    assertThat(scalarOutcome(answer(ServerCallStreamObserver::onCompleted)))
        .as("no response: the runtime fails the call with INTERNAL")
        .containsExactly("complete");
    assertThat(
            scalarOutcome(
                answer(
                    o -> {
                      throw new IllegalStateException("a handler's bug");
                    })))
        .containsExactly("error a handler's bug");
    assertThat(
            scalarOutcome(
                answer(
                    o -> {
                      o.onNext(text("first"));
                      o.onNext(text("second, dropped"));
                      throw new IllegalStateException("after the answer: the answer stands");
                    })))
        .containsExactly("next first", "complete");
  }

  @Test
  void onNextAfterTheEnd_throws() {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    answer(
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
    Publisher<StringValue> p = answer(kept::set);
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
  void aResponseThatComesBeforeTheRequest_waitsForIt() throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = answer(kept::set);
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
    AtomicReference<Boolean> onLoop = new AtomicReference<>();
    Publisher<StringValue> p =
        answer(
            o -> {
              o.setOnCancelHandler(
                  () -> {
                    onLoop.set(loop.inEventLoop());
                    onCancelRan.countDown();
                  });
              o.onNext(text("held back by the cancel"));
            });
    assertThat(Scalar.is(p)).as("an on-cancel handler keeps the observer's Publisher").isFalse();
    kept.set(null);
    Recorder cancelling = new Recorder(0);
    p.subscribe(cancelling);
    cancelling.subscription.cancel();
    assertThat(onCancelRan.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(onLoop.get()).isTrue();
    cancelling.subscription.request(1);
    Thread.sleep(50);
    assertThat(cancelling.signals).as("nothing after a cancel").isEmpty();
  }

  @Test
  void onNextAfterACancel_withoutAnOnCancelHandler_throwsCancelled() {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = answer(kept::set);
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
  void anInvalidRequest_failsTheSubscriber() throws Exception {
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p = answer(kept::set);
    Recorder r = new Recorder(0);
    p.subscribe(r);
    r.subscription.request(0);
    assertThat(r.awaitEnd()).singleElement().asString().contains("rule 3.9");
    kept.get().onNext(text("dropped"));
    assertThat(r.signals).hasSize(1);
  }

  @Test
  void anOnReadyHandler_runsOnceOnTheLoop_whenTheHandlerReturnedWithoutAnAnswer() throws Exception {
    CountDownLatch ready = new CountDownLatch(1);
    AtomicReference<ServerCallStreamObserver<StringValue>> kept = new AtomicReference<>();
    Publisher<StringValue> p =
        answer(
            o -> {
              kept.set(o);
              o.setOnReadyHandler(
                  () -> {
                    kept.get().onNext(text("when ready"));
                    kept.get().onCompleted();
                    ready.countDown();
                  });
            });
    assertThat(ready.await(5, TimeUnit.SECONDS)).isTrue();
    Recorder r = new Recorder(1);
    p.subscribe(r);
    assertThat(r.awaitEnd()).containsExactly("next when ready", "complete");
  }
}
