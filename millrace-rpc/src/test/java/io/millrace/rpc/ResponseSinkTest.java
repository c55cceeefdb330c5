package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A blocking handler's sink without sockets: its sends follow what the caller asked for exactly,
 * however the sender takes that demand (all of it at once, since session 48), and a cancel ends
 * them.
 */
class ResponseSinkTest {
  private final ExecutorService handler = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    handler.shutdownNow();
  }

  /** Subscribes to a handler that sends 0, 1, 2, ... until it is cancelled. */
  private Reader endless(AtomicInteger sent, AtomicReference<Throwable> endedWith) {
    Reader reader = new Reader();
    ResponseSink.<Integer>publisher(
            handler,
            sink -> {
              try {
                for (int i = 0; i < 1_000; i++) {
                  sink.send(i);
                  sent.incrementAndGet();
                }
              } catch (RuntimeException e) {
                endedWith.set(e);
                throw e;
              }
            })
        .subscribe(reader);
    return reader;
  }

  @Test
  void aSenderIsHeldToWhatWasAskedFor_andGoesOnAsMoreIsAsked() throws Exception {
    AtomicInteger sent = new AtomicInteger();
    AtomicReference<Throwable> endedWith = new AtomicReference<>();
    Reader reader = endless(sent, endedWith);
    reader.subscription.get().request(3);
    assertSettlesAt(sent::get, 3);
    assertThat(reader.received).containsExactly(0, 1, 2);
    reader.subscription.get().request(5); // while the sender waits
    assertSettlesAt(sent::get, 8);
    reader.subscription.get().request(2);
    reader.subscription.get().request(2); // two requests before the sender takes either
    assertSettlesAt(sent::get, 12);
    assertThat(reader.received).hasSize(12).startsWith(0, 1, 2, 3).endsWith(11);
    reader.subscription.get().cancel();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (endedWith.get() == null && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(endedWith.get())
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.CANCELLED));
    assertThat(sent).hasValue(12);
  }

  @Test
  void anUnboundedRequest_letsEverythingThrough() throws Exception {
    AtomicInteger sent = new AtomicInteger();
    Reader reader = endless(sent, new AtomicReference<>());
    reader.subscription.get().request(2);
    assertSettlesAt(sent::get, 2);
    reader.subscription.get().request(Long.MAX_VALUE);
    assertThat(reader.completed.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(sent).hasValue(1_000);
    assertThat(reader.received).hasSize(1_000);
  }

  /**
   * Waits (bounded) for {@code count} to reach {@code expected}, then checks it stays there: the
   * sender, had it taken more than was asked for, would have gone on.
   */
  private static void assertSettlesAt(IntSupplier count, int expected) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (count.getAsInt() < expected && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    Thread.sleep(200);
    assertThat(count.getAsInt()).isEqualTo(expected);
  }

  private static final class Reader implements Subscriber<Integer> {
    final AtomicReference<Subscription> subscription = new AtomicReference<>();
    final List<Integer> received = new CopyOnWriteArrayList<>();
    final CountDownLatch completed = new CountDownLatch(1);

    @Override
    public void onSubscribe(Subscription s) {
      subscription.set(s);
    }

    @Override
    public void onNext(Integer value) {
      received.add(value);
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {
      completed.countDown();
    }
  }
}
