package io.millrace.bench.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** grpc-java at the RPC level moves bench.proto messages both ways; no timing thresholds. */
class GrpcRpcLevelTest {
  @Test
  void requestResponseAndStream_moveBenchMessages() throws Exception {
    GrpcSystem system = GrpcSystem.rpcLevel();
    assertThat(system.name()).isEqualTo("grpc-java-rpc");
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    LongAdder handled = new LongAdder();
    BenchServer server = system.startServer(port, 64, handled);
    BenchClient client = system.connect(port, 64);
    try {
      CountDownLatch answered = new CountDownLatch(50);
      for (int i = 0; i < 50; i++) {
        client.eventLoop().execute(() -> client.requestResponse(answered::countDown));
      }
      assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(handled.sum()).isEqualTo(50);
      LongAdder streamed = new LongAdder();
      client.startStream(streamed);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (streamed.sum() < 1_000 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(streamed.sum()).isGreaterThanOrEqualTo(1_000);
      assertThat(((GrpcSystem.Client) client).errors()).isZero();
    } finally {
      client.close();
      server.close();
    }
  }
}
