package io.millrace.bench.millrace;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The RPC system's interactions make progress through the generated code; no timing thresholds. */
class MillraceRpcSystemTest {
  private final MillraceRpcSystem system = new MillraceRpcSystem();
  private final LongAdder handled = new LongAdder();
  private BenchServer server;
  private BenchClient client;

  @BeforeEach
  void start() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    server = system.startServer(port, 128, handled);
    client = system.connect(port, 128);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void requestResponse_answers() throws Exception {
    CountDownLatch answered = new CountDownLatch(100);
    for (int i = 0; i < 100; i++) {
      client.eventLoop().execute(() -> client.requestResponse(answered::countDown));
    }
    assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(handled.sum()).isEqualTo(100);
  }

  @Test
  void streamAndChannel_flow() throws Exception {
    LongAdder streamed = new LongAdder();
    LongAdder echoed = new LongAdder();
    client.startStream(streamed);
    client.startChannel(echoed);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((streamed.sum() < 10_000 || echoed.sum() < 10_000) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(streamed.sum()).isGreaterThanOrEqualTo(10_000);
    assertThat(echoed.sum()).isGreaterThanOrEqualTo(10_000);
  }
}
