package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.streams.Payload;
import io.millrace.testing.SignalRecorder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;

/**
 * {@link UnaryAnswer} without a connection: races between the library's answer and the runtime's
 * request and cancel, invalid requests from any thread, a library whose subscribe throws, a second
 * subscriber, and what becomes of a response that is never signalled.
 */
class UnaryAnswerTest {

  /** A library's answer reduced to its calls: counts subscriptions and cancels. */
  private static final class TestAnswer extends UnaryAnswer<String> {
    final AtomicInteger subscribed = new AtomicInteger();
    final AtomicInteger cancels = new AtomicInteger();
    final List<String> discarded = new java.util.concurrent.CopyOnWriteArrayList<>();
    final boolean repeatable;
    RuntimeException subscribeThrows;

    TestAnswer(boolean repeatable) {
      this.repeatable = repeatable;
    }

    boolean give(String value) {
      return answer(value);
    }

    @Override
    protected void onSubscribed() {
      subscribed.incrementAndGet();
      if (subscribeThrows != null) {
        throw subscribeThrows;
      }
    }

    @Override
    protected void onCancelled() {
      cancels.incrementAndGet();
    }

    @Override
    protected UnaryAnswer<String> again() {
      return repeatable ? new TestAnswer(false) : null;
    }

    @Override
    protected void discard(String response) {
      discarded.add(response);
    }
  }

  private static class Recorder extends SignalRecorder<String> {
    Recorder(long initial) {
      super(initial);
    }
  }

  @Test
  void anAnswerRacingACancel_givesTheResponseWholeOrNothing() throws Exception {
    for (int i = 0; i < 5_000; i++) {
      TestAnswer answer = new TestAnswer(false);
      Recorder r = new Recorder(1);
      answer.subscribe(r);
      CountDownLatch ready = new CountDownLatch(1);
      AtomicInteger go = new AtomicInteger();
      Thread library =
          new Thread(
              () -> {
                ready.countDown();
                while (go.get() == 0) {
                  Thread.onSpinWait(); // both start together: the answer races the cancel
                }
                answer.give("v");
              });
      library.start();
      ready.await();
      go.set(1);
      r.subscription.cancel();
      library.join();
      assertThat(r.signals).as("round %d", i).isIn(List.of(), List.of("next v", "complete"));
      assertThat(answer.cancels.get()).isEqualTo(1);
      assertThat(answer.discarded)
          .as("a response not signalled is discarded, once")
          .hasSize(r.signals.isEmpty() ? 1 : 0);
    }
  }

  @Test
  void anInvalidRequestFromAnotherThread_asOnSubscribeReturns_failsTheCallOnce() throws Exception {
    for (int i = 0; i < 2_000; i++) {
      TestAnswer answer = new TestAnswer(false);
      CountDownLatch go = new CountDownLatch(1);
      Recorder r =
          new Recorder(0) {
            @Override
            public void onSubscribe(Subscription s) {
              super.onSubscribe(s);
              new Thread(
                      () -> {
                        try {
                          go.await();
                        } catch (InterruptedException e) {
                          return;
                        }
                        s.request(-1);
                      })
                  .start();
              go.countDown(); // the request races onSubscribe's return
            }
          };
      answer.subscribe(r);
      assertThat(r.ended.await(5, TimeUnit.SECONDS)).as("round %d", i).isTrue();
      Thread.sleep(0, 100);
      assertThat(r.signals).singleElement().asString().contains("(rule 3.9): -1");
      assertThat(answer.cancels.get()).as("the library's work is cancelled").isEqualTo(1);
    }
  }

  @Test
  void aLibraryWhoseSubscribeThrows_failsTheCallWithIt() throws Exception {
    TestAnswer answer = new TestAnswer(false);
    answer.subscribeThrows = new IllegalStateException("subscribeActual failed");
    Recorder r = new Recorder(1);
    answer.subscribe(r);
    assertThat(r.signals).containsExactly("error subscribeActual failed");
  }

  @Test
  void aSecondSubscriber_getsAFreshAnswer_whenTheLibraryCanSubscribeAgain() throws Exception {
    TestAnswer repeatable = new TestAnswer(true);
    repeatable.subscribe(new Recorder(1));
    Recorder second = new Recorder(1);
    repeatable.subscribe(second);
    assertThat(second.signals).as("a fresh answer, still open").isEmpty();
    assertThat(repeatable.subscribed.get()).isEqualTo(1);

    TestAnswer once = new TestAnswer(false);
    once.subscribe(new Recorder(1));
    Recorder refused = new Recorder(1);
    once.subscribe(refused);
    assertThat(refused.signals).singleElement().asString().contains("one subscriber");
  }

  @Test
  void aResponseThatComesAfterTheCancel_isDiscarded() {
    TestAnswer answer = new TestAnswer(false);
    Recorder r = new Recorder(1);
    answer.subscribe(r);
    r.subscription.cancel();
    assertThat(answer.give("late")).isFalse();
    assertThat(answer.discarded).containsExactly("late");
    assertThat(r.signals).isEmpty();
  }

  @Test
  void aResponseWaitingForItsRequest_isDiscardedByACancel() {
    TestAnswer answer = new TestAnswer(false);
    Recorder r = new Recorder(0);
    answer.subscribe(r);
    assertThat(answer.give("waiting")).isTrue();
    assertThat(answer.discarded).isEmpty();
    r.subscription.cancel();
    assertThat(answer.discarded).containsExactly("waiting");
    r.subscription.request(1);
    assertThat(r.signals).isEmpty();
  }

  @Test
  void aResponseWaitingForItsRequest_isDiscardedByAnInvalidRequest() {
    TestAnswer answer = new TestAnswer(false);
    Recorder r = new Recorder(0);
    answer.subscribe(r);
    answer.give("waiting");
    r.subscription.request(0);
    assertThat(answer.discarded).containsExactly("waiting");
    assertThat(r.signals).singleElement().asString().contains("(rule 3.9): 0");
  }

  @Test
  void aSecondResponse_isDiscarded_andTheFirstSignalled() {
    TestAnswer answer = new TestAnswer(false);
    Recorder r = new Recorder(1);
    answer.subscribe(r);
    assertThat(answer.give("first")).isTrue();
    assertThat(answer.give("second")).isFalse();
    assertThat(r.signals).containsExactly("next first", "complete");
    assertThat(answer.discarded).containsExactly("second");
  }

  @Test
  void aResponseHandedOverAsKnown_isTheTakersToRelease() throws Exception {
    TestAnswer answer = new TestAnswer(false);
    answer.give("at once");
    Publisher<String> settled = answer.settled();
    assertThat(Scalar.is(settled)).isTrue();
    assertThat(Scalar.call(settled)).isEqualTo("at once");
    answer.cancel(); // too late: it was handed over
    assertThat(answer.discarded).isEmpty();
  }

  @Test
  void aKnownPayloadThatIsNeverSignalled_isReleasedByItsSubscription() {
    ByteBuf cancelled = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(1);
    SignalRecorder<Payload> r = new SignalRecorder<>(0);
    Scalar.known(Payload.of(cancelled), null).subscribe(r);
    r.subscription.cancel();
    assertThat(cancelled.refCnt()).as("released on cancel").isZero();

    ByteBuf refused = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(2);
    SignalRecorder<Payload> invalid = new SignalRecorder<>(0);
    Scalar.known(Payload.of(refused), null).subscribe(invalid);
    invalid.subscription.request(-1);
    assertThat(refused.refCnt()).as("released on an invalid request").isZero();
    assertThat(invalid.signals).singleElement().asString().contains("must be positive");

    ByteBuf sent = PooledByteBufAllocator.DEFAULT.directBuffer().writeByte(3);
    SignalRecorder<Payload> taker =
        new SignalRecorder<>(1) {
          @Override
          public void onNext(Payload p) {
            super.onNext(p);
            p.release(); // the subscriber's once signalled
          }
        };
    Scalar.known(Payload.of(sent), null).subscribe(taker);
    taker.subscription.cancel(); // after the item: nothing more to release
    assertThat(sent.refCnt()).isZero();
    assertThat(taker.signals).hasSize(2);
  }
}
