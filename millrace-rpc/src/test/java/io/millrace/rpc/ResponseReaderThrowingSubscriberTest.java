package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Int32Value;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.RepeatedTest;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A caller's Subscriber whose onNext throws (rule 2.13 forbids it) while it asks one at a time from
 * threads other than the loop, so that responses reach it both straight from the read and from the
 * reader's own drain: either way the call is cancelled and the subscriber told, UNKNOWN with its
 * exception as the cause (it was neither told nor the call cancelled on the drain's way).
 */
class ResponseReaderThrowingSubscriberTest {
  /** This test's own loop: the TCK classes' shared one may still be busy with their streams. */
  private static final io.netty.util.concurrent.EventExecutor LOOP =
      new io.netty.util.concurrent.DefaultEventExecutor(
          new io.netty.util.concurrent.DefaultThreadFactory("throwing-reader-loop", true));

  @RepeatedTest(20)
  void aSubscriberWhoseOnNextThrows_isToldAndTheCallIsCancelled() throws Exception {
    throwsAtTheFourth(new IllegalStateException("the caller's code failed"));
  }

  /** A checked exception its code throws undeclared (Kotlin, Lombok's @SneakyThrows): the same. */
  @RepeatedTest(5)
  void aSubscriberWhoseOnNextThrowsACheckedException_isToldAndTheCallIsCancelled()
      throws Exception {
    throwsAtTheFourth(new java.io.IOException("the caller's file was gone"));
  }

  private static void throwsAtTheFourth(Throwable thrown) throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    Flux<io.millrace.streams.Payload> payloads =
        Flux.range(0, 10_000)
            .map(ResponseReaderTckTest::payload)
            .doOnCancel(cancelled::countDown)
            .subscribeOn(Schedulers.fromExecutor(LOOP));
    AtomicReference<Throwable> told = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger seen =
        new java.util.concurrent.atomic.AtomicInteger();
    ResponseReaderTckTest.reader(payloads, CallOptions.DEFAULT, LOOP)
        .subscribe(
            new Subscriber<Int32Value>() {
              private Subscription s;

              @Override
              public void onSubscribe(Subscription s) {
                this.s = s;
                ForkJoinPool.commonPool().execute(() -> s.request(1));
              }

              @Override
              public void onNext(Int32Value value) {
                seen.incrementAndGet();
                if (value.getValue() == 3) {
                  io.millrace.testing.Undeclared.thrown(thrown);
                }
                ForkJoinPool.commonPool().execute(() -> s.request(1));
              }

              @Override
              public void onError(Throwable t) {
                told.set(t);
                ended.countDown();
              }

              @Override
              public void onComplete() {
                ended.countDown();
              }
            });
    assertThat(ended.await(10, TimeUnit.SECONDS))
        .as("the subscriber was told (it saw %s)", seen)
        .isTrue();
    assertThat(told.get())
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.UNKNOWN);
              assertThat(e).hasCause(thrown);
            });
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the call was cancelled").isTrue();
  }
}
