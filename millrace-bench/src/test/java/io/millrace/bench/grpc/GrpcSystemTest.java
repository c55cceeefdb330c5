package io.millrace.bench.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.bench.BenchServer;
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

/** Checks that every interaction of the grpc-java system makes progress; no timing thresholds. */
class GrpcSystemTest {
  private static final int PAYLOAD_SIZE = 128;

  private final GrpcSystem system = new GrpcSystem();
  private final LongAdder handled = new LongAdder();
  private BenchServer server;
  private GrpcSystem.Client client;

  @BeforeEach
  void start() throws Exception {
    int port = freePort();
    server = system.startServer(port, PAYLOAD_SIZE, handled);
    client = (GrpcSystem.Client) system.connect(port, PAYLOAD_SIZE);
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

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /**
   * Waits (bounded) for both counters to move, then checks that both grow again. The waits are
   * bounds, not timings: a cold call path on a loaded machine may take longer than a run's worth.
   */
  private void assertProgress(LongSupplier clientCounter) throws InterruptedException {
    long clientBefore = grown(clientCounter, 0);
    long serverBefore = grown(handled::sum, 0);
    assertThat(clientBefore).isPositive();
    assertThat(serverBefore).isPositive();
    assertThat(grown(clientCounter, clientBefore)).isGreaterThan(clientBefore);
    assertThat(grown(handled::sum, serverBefore)).isGreaterThan(serverBefore);
    assertThat(client.errors()).isZero();
  }

  /** {@code counter} once it is above {@code from}, or after ten seconds if it never is. */
  private static long grown(LongSupplier counter, long from) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    long now;
    while ((now = counter.getAsLong()) <= from && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    return now;
  }

  @Test
  void name() {
    assertThat(system.name()).isEqualTo("grpc-java");
  }

  @Test
  void requestResponseChainsFromTheCallback() throws Exception {
    int calls = 100;
    AtomicInteger done = new AtomicInteger();
    CountDownLatch finished = new CountDownLatch(1);
    Runnable onResponse =
        new Runnable() {
          @Override
          public void run() {
            if (done.incrementAndGet() == calls) {
              finished.countDown();
            } else {
              client.requestResponse(this);
            }
          }
        };
    client.requestResponse(onResponse);
    assertThat(finished.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(done.get()).isEqualTo(calls);
    assertThat(client.errors()).isZero();
    // The server counts a request right after answering it.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (handled.sum() < calls && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(handled.sum()).isEqualTo(calls);
  }

  @Test
  void requestResponseFromAnotherThread() throws Exception {
    for (int i = 0; i < 100; i++) {
      CountDownLatch response = new CountDownLatch(1);
      client.requestResponse(response::countDown);
      assertThat(response.await(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(client.errors()).isZero();
  }

  @Test
  void requestResponseWindowMakesProgress() throws Exception {
    LongAdder responses = new LongAdder();
    Runnable onResponse =
        new Runnable() {
          @Override
          public void run() {
            responses.increment();
            client.requestResponse(this);
          }
        };
    for (int i = 0; i < 64; i++) {
      client.requestResponse(onResponse);
    }
    assertProgress(responses::sum);
  }

  @Test
  void fireAndForgetMakesProgress() throws Exception {
    LongAdder sent = new LongAdder();
    client.startFireAndForget(sent);
    assertProgress(sent::sum);
  }

  @Test
  void requestStreamMakesProgress() throws Exception {
    LongAdder received = new LongAdder();
    client.startStream(received);
    assertProgress(received::sum);
  }

  @Test
  void requestChannelMakesProgress() throws Exception {
    LongAdder received = new LongAdder();
    client.startChannel(received);
    assertProgress(received::sum);
  }
}
