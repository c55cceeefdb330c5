package io.millrace.bench.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A smoke test of the rsocket-java bench system: every interaction makes progress; no timings. */
@Timeout(60)
class RSocketJavaSystemTest {
  private static final int PAYLOAD_SIZE = 128;
  private static final long AWAIT_MILLIS = 10_000;
  private static final long OBSERVE_MILLIS = 300;

  private final BenchSystem system = new RSocketJavaSystem();
  private final LongAdder handled = new LongAdder();
  private BenchServer server;
  private BenchClient client;

  @BeforeEach
  void start() throws Exception {
    int port = freePort();
    server = system.startServer(port, PAYLOAD_SIZE, handled);
    client = system.connect(port, PAYLOAD_SIZE);
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void name_isRSocketJava() {
    assertThat(system.name()).isEqualTo("rsocket-java");
  }

  @Test
  void requestResponse_hundredSequentialCalls_allComplete() throws Exception {
    for (int i = 0; i < 100; i++) {
      CountDownLatch done = new CountDownLatch(1);
      client.requestResponse(done::countDown);
      assertThat(done.await(AWAIT_MILLIS, TimeUnit.MILLISECONDS)).as("response %d", i).isTrue();
    }
    assertThat(handled.sum()).isEqualTo(100);
  }

  @Test
  void requestResponse_calledFromItsOwnCallback_chainsHundredCalls() throws Exception {
    AtomicInteger responses = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(1);
    Runnable onResponse =
        new Runnable() {
          @Override
          public void run() {
            if (responses.incrementAndGet() == 100) {
              done.countDown();
            } else {
              client.requestResponse(this);
            }
          }
        };

    client.requestResponse(onResponse);

    assertThat(done.await(AWAIT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
    assertThat(handled.sum()).isEqualTo(100);
  }

  @Test
  void requestResponse_windowOfConcurrentCalls_allComplete() throws Exception {
    int calls = 2_000;
    CountDownLatch done = new CountDownLatch(calls);
    Thread[] threads = new Thread[2];
    for (int t = 0; t < threads.length; t++) {
      threads[t] =
          new Thread(
              () -> {
                for (int i = 0; i < calls / threads.length; i++) {
                  client.requestResponse(done::countDown);
                }
              });
      threads[t].start();
    }
    for (Thread thread : threads) {
      thread.join();
    }

    assertThat(done.await(AWAIT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
    assertThat(handled.sum()).isEqualTo(calls);
  }

  @Test
  void fireAndForget_sendsAndServerReceivesContinuously() throws Exception {
    LongAdder sent = new LongAdder();

    client.startFireAndForget(sent);

    assertProgress("fire-and-forget sent", sent::sum);
    assertProgress("fire-and-forget handled by the server", handled::sum);
    assertThat(handled.sum()).isLessThanOrEqualTo(sent.sum());
  }

  @Test
  void requestStream_receivesContinuously() throws Exception {
    LongAdder received = new LongAdder();

    client.startStream(received);

    assertProgress("stream items received", received::sum);
    assertProgress("stream items sent by the server", handled::sum);
    assertThat(received.sum()).isLessThanOrEqualTo(handled.sum());
  }

  @Test
  void requestChannel_echoesContinuously() throws Exception {
    LongAdder received = new LongAdder();

    client.startChannel(received);

    assertProgress("channel echoes received", received::sum);
    assertProgress("channel items echoed by the server", handled::sum);
    assertThat(received.sum()).isLessThanOrEqualTo(handled.sum());
  }

  /**
   * Waits until {@code counter} passes two windows' worth of messages (so credit has been
   * replenished, not just used up), then checks it keeps growing for a short while. The wait is
   * generous because the leak detector runs at paranoid level; nothing here measures speed.
   */
  private static void assertProgress(String what, LongSupplier counter)
      throws InterruptedException {
    long threshold = 2L * RSocketJavaClient.WINDOW;
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AWAIT_MILLIS);
    while (counter.getAsLong() <= threshold && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    long before = counter.getAsLong();
    assertThat(before).as(what).isGreaterThan(threshold);
    Thread.sleep(OBSERVE_MILLIS);
    assertThat(counter.getAsLong())
        .as(what + " after " + OBSERVE_MILLIS + " ms")
        .isGreaterThan(before);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
