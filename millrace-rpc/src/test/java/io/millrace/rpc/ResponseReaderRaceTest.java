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
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The caller's reader when its subscriber asks from one thread while the last response and the end
 * arrive on another: the response always goes out before the completion, never lost.
 */
class ResponseReaderRaceTest {
  private static final int ROUNDS = 2_000;

  @Test
  void aRequestRacingTheLastResponseAndTheEnd_neverLosesTheResponse() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < ROUNDS; round++) {
        java.util.concurrent.atomic.AtomicReference<Subscriber<? super Payload>> upstream =
            new java.util.concurrent.atomic.AtomicReference<>();
        org.reactivestreams.Publisher<Int32Value> reader =
            ResponseReaderTckTest.reader(
                s -> {
                  upstream.set(s);
                  s.onSubscribe(
                      new Subscription() {
                        @Override
                        public void request(long n) {}

                        @Override
                        public void cancel() {}
                      });
                });
        List<Object> signals = new CopyOnWriteArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        Subscription[] subscription = new Subscription[1];
        reader.subscribe(
            new Subscriber<Int32Value>() {
              @Override
              public void onSubscribe(Subscription s) {
                subscription[0] = s;
              }

              @Override
              public void onNext(Int32Value v) {
                signals.add(v.getValue());
              }

              @Override
              public void onError(Throwable t) {
                signals.add(t);
                ended.countDown();
              }

              @Override
              public void onComplete() {
                signals.add("complete");
                ended.countDown();
              }
            });
        CyclicBarrier start = new CyclicBarrier(2);
        int value = round + 1;
        Future<?> asks =
            threads.submit(
                () -> {
                  start.await();
                  subscription[0].request(1);
                  return null;
                });
        Future<?> delivers =
            threads.submit(
                () -> {
                  start.await();
                  upstream
                      .get()
                      .onNext(
                          Payload.of(Unpooled.wrappedBuffer(Int32Value.of(value).toByteArray())));
                  upstream.get().onComplete();
                  return null;
                });
        asks.get(5, TimeUnit.SECONDS);
        delivers.get(5, TimeUnit.SECONDS);
        assertThat(ended.await(5, TimeUnit.SECONDS)).as("round %d ended", round).isTrue();
        assertThat(signals).as("round %d", round).containsExactly(value, "complete");
      }
    } finally {
      threads.shutdownNow();
    }
  }
}
