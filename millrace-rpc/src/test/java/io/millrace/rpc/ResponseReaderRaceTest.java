package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The caller's reader when its subscriber asks from one thread while the responses and the end
 * arrive on the connection's loop: the response always goes out before the completion, never lost,
 * and always from the loop, never before the subscriber's onSubscribe has returned.
 */
class ResponseReaderRaceTest {
  private static final int ROUNDS = 2_000;

  private static Payload payload(int value) {
    return Payload.of(Unpooled.wrappedBuffer(Int32Value.of(value).toByteArray()));
  }

  /** A publisher that hands its subscriber out and ignores what it is asked. */
  private static org.reactivestreams.Publisher<Payload> captured(
      AtomicReference<Subscriber<? super Payload>> upstream) {
    return captured(upstream, new CopyOnWriteArrayList<>());
  }

  /** As {@link #captured(AtomicReference)}, recording each request's n, and a cancel as -1. */
  private static org.reactivestreams.Publisher<Payload> captured(
      AtomicReference<Subscriber<? super Payload>> upstream, List<Long> asked) {
    return s -> {
      upstream.set(s);
      s.onSubscribe(
          new Subscription() {
            @Override
            public void request(long n) {
              asked.add(n);
            }

            @Override
            public void cancel() {
              asked.add(-1L);
            }
          });
    };
  }

  /** Records the signals, whether each came on the loop, and the end. */
  private static class Recorder implements Subscriber<Int32Value> {
    final List<Object> signals = new CopyOnWriteArrayList<>();
    final List<Boolean> onLoop = new CopyOnWriteArrayList<>();
    final CountDownLatch ended = new CountDownLatch(1);
    volatile Subscription subscription;

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
    }

    @Override
    public void onNext(Int32Value v) {
      onLoop.add(ResponseReaderTckTest.LOOP.inEventLoop());
      signals.add(v.getValue());
    }

    @Override
    public void onError(Throwable t) {
      onLoop.add(ResponseReaderTckTest.LOOP.inEventLoop());
      signals.add(t);
      ended.countDown();
    }

    @Override
    public void onComplete() {
      onLoop.add(ResponseReaderTckTest.LOOP.inEventLoop());
      signals.add("complete");
      ended.countDown();
    }
  }

  @Test
  void aResponseThatArrivesWhileOnSubscribeRuns_waitsUntilItHasReturned() throws Exception {
    AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
    org.reactivestreams.Publisher<Int32Value> reader =
        ResponseReaderTckTest.readerOfLoopSignals(captured(upstream));
    Recorder recorder =
        new Recorder() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(2);
            try {
              // The loop delivers a response and the end while this is still inside onSubscribe.
              ResponseReaderTckTest.LOOP
                  .submit(
                      () -> {
                        upstream.get().onNext(payload(7));
                        upstream.get().onComplete();
                      })
                  .get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
              throw new AssertionError(e);
            }
            signals.add("onSubscribe returns");
          }
        };
    reader.subscribe(recorder);
    assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.signals).containsExactly("onSubscribe returns", 7, "complete");
    assertThat(recorder.onLoop).containsOnly(true);
  }

  @Test
  void responsesWaitingForDemand_goOutOnTheLoopWhenAThreadAsks() throws Exception {
    AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
    org.reactivestreams.Publisher<Int32Value> reader =
        ResponseReaderTckTest.readerOfLoopSignals(captured(upstream));
    Recorder recorder = new Recorder();
    reader.subscribe(recorder);
    ResponseReaderTckTest.LOOP
        .submit(
            () -> {
              for (int i = 1; i <= 3; i++) {
                upstream.get().onNext(payload(i));
              }
              upstream.get().onComplete();
            })
        .get(5, TimeUnit.SECONDS);
    assertThat(recorder.signals).isEmpty(); // nothing asked for yet
    recorder.subscription.request(2); // from this thread
    recorder.subscription.request(1);
    assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.signals).containsExactly(1, 2, 3, "complete");
    assertThat(recorder.onLoop).containsOnly(true);
  }

  @Test
  void theCallIsAskedForOneUnitMoreThanTheSubscriberOnce_forTheTrailer() throws Exception {
    AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
    List<Long> asked = new CopyOnWriteArrayList<>();
    Recorder recorder = new Recorder();
    ResponseReaderTckTest.readerOfLoopSignals(captured(upstream, asked)).subscribe(recorder);
    recorder.subscription.request(3);
    recorder.subscription.request(5);
    recorder.subscription.cancel();
    recorder.subscription.request(7); // after the cancel: nothing
    assertThat(asked).containsExactly(4L, 5L, -1L);
  }

  @Test
  void aDeadlineWithAResponseWaitingForDemand_failsTheCallOnTheLoopAndCancelsIt() throws Exception {
    AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
    List<Long> asked = new CopyOnWriteArrayList<>();
    Recorder recorder = new Recorder();
    ResponseReaderTckTest.reader(
            captured(upstream, asked),
            CallOptions.DEFAULT.withTimeout(java.time.Duration.ofMillis(200)),
            ResponseReaderTckTest.LOOP)
        .subscribe(recorder);
    ResponseReaderTckTest.LOOP
        .submit(() -> upstream.get().onNext(payload(1))) // on the trailer's unit: it waits
        .get(5, TimeUnit.SECONDS);
    assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.signals).hasSize(1);
    assertThat(recorder.signals.get(0))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(recorder.onLoop).containsExactly(true);
    assertThat(asked).containsExactly(-1L); // the call is cancelled at the server too
  }

  @Test
  void aLoopThatHasShutDown_failsTheCallOnceWithUnavailable() throws Exception {
    io.netty.util.concurrent.EventExecutor dead =
        new io.netty.util.concurrent.DefaultEventExecutor();
    dead.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
    Recorder recorder =
        new Recorder() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(1); // its drain cannot run on the loop
            signals.add("onSubscribe returns");
          }
        };
    ResponseReaderTckTest.reader(captured(upstream), CallOptions.DEFAULT, dead).subscribe(recorder);
    assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(50); // room for a second terminal signal, which must not come
    assertThat(recorder.signals).hasSize(2).first().isEqualTo("onSubscribe returns");
    assertThat(recorder.signals.get(1))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  @Test
  void aDeadlineOnALoopThatHasShutDown_failsTheCallInsteadOfThrowingFromSubscribe()
      throws Exception {
    io.netty.util.concurrent.EventExecutor dead =
        new io.netty.util.concurrent.DefaultEventExecutor();
    dead.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    Recorder recorder = new Recorder(); // asks for nothing
    ResponseReaderTckTest.reader(
            captured(new AtomicReference<>()),
            CallOptions.DEFAULT.withTimeout(java.time.Duration.ofSeconds(1)),
            dead)
        .subscribe(recorder);
    assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.signals)
        .singleElement()
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  @Test
  void aRequestRacingTheLastResponseAndTheEnd_neverLosesTheResponse() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < ROUNDS; round++) {
        AtomicReference<Subscriber<? super Payload>> upstream = new AtomicReference<>();
        org.reactivestreams.Publisher<Int32Value> reader =
            ResponseReaderTckTest.readerOfLoopSignals(captured(upstream));
        Recorder recorder = new Recorder();
        reader.subscribe(recorder);
        CyclicBarrier start = new CyclicBarrier(2);
        int value = round + 1;
        Future<?> asks =
            threads.submit(
                () -> {
                  start.await();
                  recorder.subscription.request(1);
                  return null;
                });
        Future<?> delivers =
            threads.submit(
                () -> {
                  start.await();
                  ResponseReaderTckTest.LOOP
                      .submit(
                          () -> {
                            upstream.get().onNext(payload(value));
                            upstream.get().onComplete();
                          })
                      .get();
                  return null;
                });
        asks.get(5, TimeUnit.SECONDS);
        delivers.get(5, TimeUnit.SECONDS);
        assertThat(recorder.ended.await(5, TimeUnit.SECONDS)).as("round %d ended", round).isTrue();
        assertThat(recorder.signals).as("round %d", round).containsExactly(value, "complete");
        assertThat(recorder.onLoop).as("round %d", round).containsOnly(true);
      }
    } finally {
      threads.shutdownNow();
    }
  }
}
