package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.EventExecutor;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The one-answer publisher against a stand-in connection, without sockets: when the request goes
 * out, what the subscriber hears for each way a call ends, on which thread, and who releases what.
 */
class AnswerPublisherTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final FakeConnection fake = new FakeConnection();

  @AfterEach
  void stop() throws InterruptedException {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  private AnswerPublisher call(ByteBuf request) {
    return AnswerPublisher.of(fake.connection(), StreamsOptions.DEFAULT, Payload.of(request));
  }

  private AnswerPublisher call(StreamsOptions options, ByteBuf request) {
    return AnswerPublisher.of(fake.connection(), options, Payload.of(request));
  }

  private void onLoop(Runnable task) throws Exception {
    loop.submit(task).get(5, TimeUnit.SECONDS);
  }

  @Test
  void theRequestGoesOutOnTheFirstDemand_onceOnSubscribeHasReturned_andOnlyOnce() throws Exception {
    ByteBuf request = Buffers.direct("hi");
    Recorder r =
        new Recorder(
            s -> {
              s.request(1);
              assertThat(fake.calls).as("nothing is sent while onSubscribe runs").hasValue(0);
              s.request(5);
            });
    call(request).subscribe(r);
    assertThat(fake.calls).hasValue(1);
    r.subscription.request(1);
    assertThat(fake.calls).as("more demand sends nothing more").hasValue(1);
    assertThat(fake.sent).containsExactly("hi");
    assertThat(request.refCnt()).as("the connection took the request").isZero();
    assertThat(r.events).isEmpty();
  }

  @Test
  void noDemand_noCall() {
    ByteBuf request = Buffers.direct("hi");
    Recorder r = new Recorder(s -> {});
    call(request).subscribe(r);
    assertThat(fake.calls).hasValue(0);
    r.subscription.cancel();
    assertThat(request.refCnt()).as("cancelled unsent: the request is released").isZero();
    r.subscription.request(1);
    assertThat(fake.calls).as("a cancelled call is never made").hasValue(0);
    assertThat(r.events).as("a cancel is not answered").isEmpty();
  }

  @Test
  void theAnswerIsDeliveredAndCompletedOnTheLoop_theEnginesCompletionAfterItIsIgnored()
      throws Exception {
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r); // from the test's thread, not the loop
    StreamListener l = fake.listener;
    ByteBuf answer = Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8);
    onLoop(
        () -> {
          l.onNext(fake.stream, null, answer);
          l.onComplete(fake.stream);
          l.onError(fake.stream, ErrorCode.APPLICATION_ERROR, "late");
        });
    assertThat(r.events).containsExactly("next ok", "complete");
    assertThat(answer.refCnt()).as("the engine's buffer, not kept").isOne();
    answer.release(); // the engine's, after the callback
    assertThat(r.payload.dataUtf8()).as("the subscriber's own copy").isEqualTo("ok");
    r.subscription.cancel();
    r.subscription.request(-1);
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
    assertThat(fake.cancels).as("an answered call is not cancelled").hasValue(0);
    assertThat(r.events).as("nothing follows the end").containsExactly("next ok", "complete");
  }

  @Test
  void anAnswerWithoutAPayloadCompletesEmpty() throws Exception {
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    onLoop(() -> fake.listener.onComplete(fake.stream));
    assertThat(r.events).containsExactly("complete");
  }

  @Test
  void thePeersErrorFailsTheCallWithItsCodeAndMessage() throws Exception {
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    onLoop(() -> fake.listener.onError(fake.stream, 0x00000301, "no such user"));
    assertThat(r.events).containsExactly("error StreamErrorException");
    StreamErrorException e = (StreamErrorException) r.error;
    assertThat(e.errorCode()).isEqualTo(0x00000301);
    assertThat(e.getMessage()).contains("no such user");
  }

  @Test
  void aCancelAfterTheSend_cancelsTheStreamOnTheLoop_andSilencesALateAnswer() throws Exception {
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    r.subscription.cancel();
    r.subscription.cancel();
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS); // the cancel task ran before this one
    assertThat(fake.cancels).hasValue(1);
    assertThat(fake.cancelThreads).allMatch(t -> t.startsWith("defaultEventLoop"));
    ByteBuf late = Unpooled.copiedBuffer("late", StandardCharsets.UTF_8);
    onLoop(() -> fake.listener.onNext(fake.stream, null, late));
    assertThat(late.refCnt()).as("left to the engine").isOne();
    late.release();
    assertThat(r.events).isEmpty();
  }

  @Test
  void aCancelWhileTheCallIsBeingMade_cancelsTheStreamOnceItIsKnown() throws Exception {
    Recorder r = new Recorder(s -> {});
    fake.whileCalling = () -> r.subscription.cancel(); // before the connection returns the stream
    call(Buffers.direct("hi")).subscribe(r);
    r.subscription.request(1);
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
    assertThat(fake.calls).hasValue(1);
    assertThat(fake.cancels).hasValue(1);
    assertThat(r.events).isEmpty();
  }

  @Test
  void aNonPositiveRequestBeforeTheSend_failsTheCall_sendsNothing_releasesTheRequest()
      throws Exception {
    ByteBuf request = Buffers.direct("hi");
    Recorder r = new Recorder(s -> s.request(0));
    call(request).subscribe(r);
    r.awaitEnd();
    assertThat(r.events).containsExactly("error IllegalArgumentException");
    assertThat(r.error).hasMessageContaining("3.9");
    assertThat(fake.calls).hasValue(0);
    assertThat(request.refCnt()).isZero();
    assertThat(r.threads).allMatch(t -> t.startsWith("defaultEventLoop"));
  }

  @Test
  void aNonPositiveRequestAfterTheSend_cancelsTheCallAndFailsIt() throws Exception {
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    r.subscription.request(-1);
    r.awaitEnd();
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
    assertThat(r.events).containsExactly("error IllegalArgumentException");
    assertThat(fake.cancels).hasValue(1);
  }

  @Test
  void aRefusedHandOff_failsTheCallWithTheReason_onTheLoop() throws Exception {
    fake.refuse = new RejectedExecutionException("the hand-off is full");
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    r.awaitEnd();
    assertThat(r.events).containsExactly("error RejectedExecutionException");
    assertThat(r.threads).allMatch(t -> t.startsWith("defaultEventLoop"));
  }

  @Test
  void aCallFailedFromInsideTheSend_withTheLoopShutDown_isToldOnTheThreadThatFoundIt()
      throws Exception {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    // As the engine does when its loop has gone: the listener hears it inside the call.
    fake.whileCalling =
        () -> fake.listener.onError(fake.stream, ErrorCode.CANCELED, "the loop is shut down");
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    assertThat(r.events).containsExactly("error StreamErrorException");
    assertThat(r.threads).containsExactly(Thread.currentThread().getName());
    r.subscription.cancel();
    assertThat(fake.cancels).as("a failed call is not cancelled").hasValue(0);
  }

  @Test
  void aCallRefusedOnTheLoop_failsOnceThere() throws Exception {
    // As the engine does for a closed connection or a missing lease, on the loop.
    fake.whileCalling =
        () -> fake.listener.onError(fake.stream, ErrorCode.REJECTED, "the connection is closing");
    Recorder r = new Recorder(s -> s.request(1));
    onLoop(() -> call(Buffers.direct("hi")).subscribe(r));
    assertThat(r.events).containsExactly("error StreamErrorException");
    assertThat(((StreamErrorException) r.error).errorCode()).isEqualTo(ErrorCode.REJECTED);
    assertThat(r.threads).allMatch(t -> t.startsWith("defaultEventLoop"));
    assertThat(fake.cancels).hasValue(0);
  }

  @Test
  void anErrorThrownBySending_endsTheCall_notTheCaller() throws Exception {
    fake.refuse = new StackOverflowError("a deeply nested value");
    Recorder r = new Recorder(s -> s.request(1));
    call(Buffers.direct("hi")).subscribe(r);
    r.awaitEnd();
    assertThat(r.events).containsExactly("error StackOverflowError");
  }

  @Test
  void aSubscriberWhoseOnSubscribeThrows_getsNothingSent_andTheRequestIsReleased() {
    ByteBuf request = Buffers.direct("hi");
    AnswerPublisher p = call(request);
    Recorder r =
        new Recorder(
            s -> {
              s.request(1);
              throw new IllegalStateException("a broken subscriber");
            });
    assertThatThrownBy(() -> p.subscribe(r)).hasMessage("a broken subscriber");
    assertThat(request.refCnt()).isZero();
    assertThat(fake.calls).hasValue(0);
  }

  @Test
  void aNonPositiveRequestInsideOnSubscribe_isToldOnlyOnceOnSubscribeHasReturned()
      throws Exception {
    Recorder r =
        new Recorder(s -> s.request(0)) {
          @Override
          public void onSubscribe(Subscription s) {
            super.onSubscribe(s);
            events.add("onSubscribe returned");
          }
        };
    onLoop(() -> call(Buffers.direct("hi")).subscribe(r)); // on the loop the error is told at once
    assertThat(r.events).containsExactly("onSubscribe returned", "error IllegalArgumentException");
  }

  @Test
  void aCancelInsideOnNext_isTooLate_theCallHasEnded() throws Exception {
    Recorder r =
        new Recorder(s -> s.request(1)) {
          @Override
          public void onNext(Payload p) {
            super.onNext(p);
            subscription.cancel();
          }
        };
    call(Buffers.direct("hi")).subscribe(r);
    ByteBuf answer = Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8);
    onLoop(() -> fake.listener.onNext(fake.stream, null, answer));
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
    assertThat(r.events).containsExactly("next ok", "complete");
    assertThat(fake.cancels).as("no CANCEL for an answered call").hasValue(0);
    answer.release();
  }

  @Test
  void aCancelRacingTheAnswer_endsTheCallOneWayOnly() throws Exception {
    ByteBuf answer = Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8);
    for (int i = 0; i < 2_000; i++) {
      int cancelsBefore = fake.cancels.get();
      Recorder r = new Recorder(s -> s.request(1));
      call(Buffers.direct("hi")).subscribe(r);
      StreamListener l = fake.listener;
      loop.execute(() -> l.onNext(fake.stream, null, answer));
      r.subscription.cancel();
      loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
      int cancels = fake.cancels.get() - cancelsBefore;
      if (r.events.isEmpty()) {
        assertThat(cancels).as("round %d: the cancel won, so it is sent", i).isOne();
      } else {
        assertThat(r.events).as("round %d", i).containsExactly("next ok", "complete");
        assertThat(cancels).as("round %d: answered, so no CANCEL", i).isZero();
      }
    }
    answer.release();
  }

  @Test
  void aCancelRacingTheStart_neverLeavesASentCallUncancelled_norTheRequestUnreleased()
      throws Exception {
    race(
        (request, other) -> {
          Recorder r = new Recorder(s -> {});
          call(request).subscribe(r);
          Future<?> cancelling = other.submit(() -> r.subscription.cancel());
          r.subscription.request(1);
          cancelling.get(5, TimeUnit.SECONDS);
          return r;
        });
  }

  @Test
  void aCallStartedOnTheLoop_cancelledFromAnotherThread_isCancelledOnTheLoopOnceSent()
      throws Exception {
    // Started on the loop, the call publishes its stream without a fence. Cancels from another
    // thread, racing the start, must reach it: through the start's own look at the wish, or
    // through the loop's second look for the stream (with both removed this fails; the second
    // look's own window, a store not yet visible, is too short to hit).
    race(
        (request, other) -> {
          Recorder r = new Recorder(s -> s.request(1));
          AnswerPublisher p = call(request);
          loop.execute(() -> p.subscribe(r));
          other
              .submit(
                  () -> {
                    Subscription s;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while ((s = r.subscription) == null && System.nanoTime() < deadline) {
                      Thread.onSpinWait();
                    }
                    s.cancel(); // races the rest of subscribe: the request, the start
                  })
              .get(5, TimeUnit.SECONDS);
          return r;
        });
    assertThat(fake.cancelThreads).allMatch(t -> t.startsWith("defaultEventLoop"));
  }

  @Test
  void aNonPositiveRequestFromAnotherThread_racingAStartAskedForInsideOnSubscribe_failsTheCall()
      throws Exception {
    race(
        (request, other) -> {
          CountDownLatch handedOver = new CountDownLatch(1);
          Recorder r =
              new Recorder(
                  s -> {
                    handedOver.countDown();
                    s.request(1);
                  });
          Future<?> invalid =
              other.submit(
                  () -> {
                    handedOver.await();
                    r.subscription.request(0); // races onSubscribe's return and the start
                    return null;
                  });
          call(request).subscribe(r);
          invalid.get(5, TimeUnit.SECONDS);
          r.awaitEnd();
          return r;
        },
        "error IllegalArgumentException");
  }

  @Test
  void aCancelInsideOnSubscribe_afterARequestThere_sendsNothing_andReleasesTheRequest() {
    ByteBuf request = Buffers.direct("hi");
    Recorder r =
        new Recorder(
            s -> {
              s.request(1);
              s.cancel();
            });
    call(request).subscribe(r);
    assertThat(fake.calls).as("cancelled before onSubscribe returned: never sent").hasValue(0);
    assertThat(request.refCnt()).isZero();
    assertThat(r.events).isEmpty();
  }

  @Test
  void aRequestFromAnotherThreadWhileOnSubscribeRuns_startsTheCallOnce_whenItReturns()
      throws Exception {
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      Recorder r =
          new Recorder(
              s -> {
                try {
                  other.submit(() -> s.request(1)).get(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
                assertThat(fake.calls).as("not while onSubscribe runs (rule 1.3)").hasValue(0);
              });
      call(Buffers.direct("hi")).subscribe(r);
      assertThat(fake.calls).as("started once onSubscribe returned").hasValue(1);
      r.subscription.request(1); // more demand from this thread afterwards changes nothing
      assertThat(fake.calls).hasValue(1);
      onLoop(() -> fake.listener.onComplete(fake.stream));
      assertThat(r.events).containsExactly("complete");
    } finally {
      other.shutdownNow();
    }
  }

  /** One round of a race: makes a call of {@code request}, racing {@code other}; its subscriber. */
  private interface Round {
    Recorder run(ByteBuf request, ExecutorService other) throws Exception;
  }

  /**
   * Runs {@code round} 2,000 times. After each, once the loop has run what was queued: the
   * subscriber heard exactly {@code events}, the request was released, sent or not, and a CANCEL
   * went out for a call that was sent, none for one that was not.
   */
  private void race(Round round, String... events) throws Exception {
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 2_000; i++) {
        int callsBefore = fake.calls.get();
        int cancelsBefore = fake.cancels.get();
        ByteBuf request = Buffers.direct("hi");
        Recorder r = round.run(request, other);
        loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
        assertThat(r.events).as("round %d", i).containsExactly(events);
        assertThat(request.refCnt()).as("round %d: released, sent or not", i).isZero();
        assertThat(fake.cancels.get() - cancelsBefore)
            .as("round %d: a sent call is cancelled, an unsent one is not", i)
            .isEqualTo(fake.calls.get() - callsBefore);
      }
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void aSecondSubscriberIsRefused_theFirstCallGoesOn() throws Exception {
    AnswerPublisher p = call(Buffers.direct("hi"));
    Recorder first = new Recorder(s -> s.request(1));
    Recorder second = new Recorder(s -> s.request(1));
    p.subscribe(first);
    p.subscribe(second);
    assertThat(second.events).containsExactly("error IllegalStateException");
    assertThat(fake.calls).hasValue(1);
    onLoop(() -> fake.listener.onComplete(fake.stream));
    assertThat(first.events).containsExactly("complete");
  }

  @Test
  void aSubscriberThatReadsBuffersInPlace_getsTheEnginesBuffers() throws Exception {
    List<ByteBuf> seen = new CopyOnWriteArrayList<>();
    class InPlace extends Recorder implements ReadsBuffersInPlace {
      InPlace() {
        super(s -> s.request(1));
      }

      @Override
      public void onNextInPlace(ByteBuf metadata, ByteBuf data) {
        seen.add(metadata);
        seen.add(data);
        events.add("in place " + data.toString(StandardCharsets.UTF_8));
      }
    }
    InPlace r = new InPlace();
    call(Buffers.direct("hi")).subscribe(r);
    ByteBuf metadata = Unpooled.copiedBuffer("m", StandardCharsets.UTF_8);
    ByteBuf answer = Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8);
    onLoop(() -> fake.listener.onNext(fake.stream, metadata, answer));
    assertThat(r.events).containsExactly("in place ok", "complete");
    assertThat(seen).containsExactly(metadata, answer);
    metadata.release();
    answer.release();
  }

  @Test
  void aSubscriberThatReadsInPlace_isLentThePayload_anyOtherOwnsIt() throws Exception {
    class Lent extends Recorder implements ReadsInPlace {
      Lent() {
        super(s -> s.request(1));
      }
    }
    Lent lent = new Lent();
    call(Buffers.direct("hi")).subscribe(lent);
    ByteBuf answer = Unpooled.copiedBuffer("ok", StandardCharsets.UTF_8);
    onLoop(() -> fake.listener.onNext(fake.stream, null, answer));
    assertThat(lent.payload.data()).as("the engine's own buffer").isSameAs(answer);

    Recorder zeroCopy = new Recorder(s -> s.request(1));
    call(StreamsOptions.builder().zeroCopy(true).build(), Buffers.direct("hi")).subscribe(zeroCopy);
    onLoop(() -> fake.listener.onNext(fake.stream, null, answer));
    assertThat(answer.refCnt()).as("a retained view for the subscriber").isEqualTo(2);
    zeroCopy.payload.release();
    assertThat(answer.refCnt()).isOne();
    answer.release();
  }

  /** Records what a subscriber hears and on which threads. */
  private static class Recorder implements Subscriber<Payload> {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();
    final CountDownLatch ended = new CountDownLatch(1);
    final Consumer<Subscription> onSubscribe;
    volatile Subscription subscription;
    volatile Throwable error;
    volatile Payload payload;

    Recorder(Consumer<Subscription> onSubscribe) {
      this.onSubscribe = onSubscribe;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      onSubscribe.accept(s);
    }

    @Override
    public void onNext(Payload p) {
      threads.add(Thread.currentThread().getName());
      payload = p;
      events.add("next " + p.dataUtf8());
    }

    @Override
    public void onError(Throwable t) {
      threads.add(Thread.currentThread().getName());
      error = t;
      events.add("error " + t.getClass().getSimpleName());
      ended.countDown();
    }

    @Override
    public void onComplete() {
      threads.add(Thread.currentThread().getName());
      events.add("complete");
      ended.countDown();
    }

    void awaitEnd() throws InterruptedException {
      assertThat(ended.await(5, TimeUnit.SECONDS)).as("the call ended").isTrue();
    }
  }

  /**
   * A connection that records the request-responses made on it (their data, their listener) and
   * hands back a stream that counts its cancels; everything else is unsupported.
   */
  private final class FakeConnection {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger cancels = new AtomicInteger();
    final List<String> sent = new CopyOnWriteArrayList<>();
    final List<String> cancelThreads = new CopyOnWriteArrayList<>();
    volatile StreamListener listener;
    volatile Throwable refuse;
    volatile Runnable whileCalling;
    final Stream stream =
        (Stream)
            Proxy.newProxyInstance(
                Stream.class.getClassLoader(),
                new Class<?>[] {Stream.class},
                (proxy, method, args) -> {
                  switch (method.getName()) {
                    case "cancel" -> {
                      cancels.incrementAndGet();
                      cancelThreads.add(Thread.currentThread().getName());
                      return null;
                    }
                    case "streamId" -> {
                      return 1;
                    }
                    case "toString" -> {
                      return "stream";
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                  }
                });

    Connection connection() {
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "executor" -> {
                    return (EventExecutor) loop;
                  }
                  case "alloc" -> {
                    return ByteBufAllocator.DEFAULT;
                  }
                  case "isOpen" -> {
                    return true;
                  }
                  case "requestResponse" -> {
                    ByteBuf metadata = (ByteBuf) args[0];
                    ByteBuf data = (ByteBuf) args[1];
                    if (metadata != null) {
                      metadata.release();
                    }
                    Throwable refused = refuse;
                    if (refused != null) {
                      data.release(); // a refused call's buffers are released by the connection
                      throw refused;
                    }
                    calls.incrementAndGet();
                    sent.add(data.toString(StandardCharsets.UTF_8));
                    data.release();
                    listener = (StreamListener) args[2];
                    Runnable during = whileCalling;
                    if (during != null) {
                      during.run();
                    }
                    return stream;
                  }
                  case "toString" -> {
                    return "connection";
                  }
                  default -> throw new UnsupportedOperationException(method.getName());
                }
              });
    }
  }
}
