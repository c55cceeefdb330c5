package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.testing.LoopBlockingExtension;
import io.millrace.transport.netty.MillraceClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The suite's detector of blocking on event loops ({@link LoopBlockingExtension}, on for every
 * test) catches a handler that sleeps on the loop: the sleep fails, the call ends with an error,
 * and the test that did it would fail. Here the report is taken so that this test passes.
 */
class LoopBlockingTest {

  @Test
  void aHandlerThatSleepsOnTheEventLoopIsCaught() throws Exception {
    assertThat(LoopBlockingExtension.installed()).as("BlockHound installed").isTrue();
    ReactorHandler sleeper =
        new ReactorHandler() {
          @Override
          public Mono<Payload> requestResponse(Payload payload) {
            try {
              Thread.sleep(5); // a blocking call where handlers run by default: the event loop
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return Mono.just(Payload.of("late"));
          }
        };
    try (Server server = Server.millrace(ReactorResponder.of(sleeper))) {
      MillraceClient client =
          MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
      try {
        Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
        assertThatThrownBy(
                () ->
                    ReactorRequester.of(c)
                        .requestResponse(Payload.of("x"))
                        .block(Duration.ofSeconds(10)))
            .hasMessageContaining("the handler failed");
      } finally {
        client.shutdownNow();
        client.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    List<String> blocked = LoopBlockingExtension.drain();
    assertThat(blocked).hasSize(1);
    assertThat(blocked.get(0))
        .contains("java.lang.Thread.sleep")
        .contains("LoopBlockingTest$1.requestResponse");
  }

  @Test
  void aLockWaitedForOnTheEventLoopIsReported_andTheLockStillWorks() throws Exception {
    // Throwing out of a lock's park would leave the loop's node in the lock's queue: the release
    // would wake it instead of the next waiter, which would wait forever. So it is reported only.
    ReentrantLock lock = new ReentrantLock();
    ReactorHandler locker =
        new ReactorHandler() {
          @Override
          public Mono<Payload> requestResponse(Payload payload) {
            lock.lock(); // held by the test: the loop parks in the lock's queue
            lock.unlock();
            return Mono.just(Payload.of("got it"));
          }
        };
    lock.lock();
    try (Server server = Server.millrace(ReactorResponder.of(locker))) {
      MillraceClient client =
          MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
      try {
        Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
        CompletableFuture<Payload> answer =
            ReactorRequester.of(c).requestResponse(Payload.of("x")).toFuture();
        awaitQueueLength(lock, 1);
        CountDownLatch behind = new CountDownLatch(1);
        Thread next =
            new Thread(
                () -> {
                  lock.lock();
                  lock.unlock();
                  behind.countDown();
                });
        next.setDaemon(true); // does not outlive a failed run
        next.start();
        awaitQueueLength(lock, 2);
        lock.unlock();
        assertThat(answer.get(10, TimeUnit.SECONDS).dataUtf8()).isEqualTo("got it");
        assertThat(behind.await(10, TimeUnit.SECONDS)).as("the waiter behind the loop").isTrue();
      } finally {
        if (lock.isHeldByCurrentThread()) {
          lock.unlock();
        }
        client.shutdownNow();
        client.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    List<String> blocked = LoopBlockingExtension.drain();
    assertThat(blocked) // a park woken early parks again, and is reported again
        .isNotEmpty()
        .allSatisfy(
            report -> assertThat(report).contains("ReentrantLock.lock", "LoopBlockingTest$2"));
  }

  private static void awaitQueueLength(ReentrantLock lock, int waiting)
      throws InterruptedException {
    for (int i = 0; i < 1000 && lock.getQueueLength() < waiting; i++) {
      Thread.sleep(10);
    }
    assertThat(lock.getQueueLength()).isEqualTo(waiting);
  }
}
