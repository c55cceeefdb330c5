package io.millrace.bench.millrace;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every RPC flavour's system makes progress in every interaction through the generated code, and
 * its server counts what it handled; no timing thresholds.
 */
class MillraceRpcSystemTest {

  static List<RpcFlavourSystem> systems() {
    return List.of(
        new MillraceRpcSystem(),
        new MillraceRpcRxJavaSystem(),
        new MillraceRpcMutinySystem(),
        new MillraceRpcFuturesSystem(),
        new MillraceRpcObserverSystem());
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @ParameterizedTest
  @MethodSource("systems")
  void everyInteraction_makesProgress(RpcFlavourSystem system) throws Exception {
    LongAdder handled = new LongAdder();
    int port = freePort();
    BenchServer server = system.startServer(port, 128, handled);
    try {
      try (BenchClient client = system.connect(port, 128)) {
        CountDownLatch answered = new CountDownLatch(100);
        for (int i = 0; i < 100; i++) {
          client.eventLoop().execute(() -> client.requestResponse(answered::countDown));
        }
        assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(handled.sum()).isEqualTo(100);

        LongAdder sent = new LongAdder();
        client.fireAndForgetFromThisThread(sent, () -> sent.sum() < 1_000);
        awaitAtLeast(handled, 1_100);

        LongAdder streamed = new LongAdder();
        client.startStream(streamed);
        awaitAtLeast(streamed, 10_000);
      }
      // The stream above never ends by itself: closing its client cancels it, so that the channel
      // is checked on its own, not beside a stream the server still sends as fast as the client
      // reads (the observer flavour reads with unbounded credit, and under the paranoid leak
      // detector that flood took the server's loop for most of 15 s).
      try (BenchClient client = system.connect(port, 128)) {
        LongAdder echoed = new LongAdder();
        client.startChannel(echoed);
        awaitAtLeast(echoed, 10_000);
      }
    } finally {
      server.close();
    }
  }

  private static void awaitAtLeast(LongAdder counter, long n) throws InterruptedException {
    // Each check takes one to a few seconds here under the tests' paranoid leak detector (every
    // buffer access records a stack trace); the bound is for slow machines.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (counter.sum() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(counter.sum()).isGreaterThanOrEqualTo(n);
  }
}
