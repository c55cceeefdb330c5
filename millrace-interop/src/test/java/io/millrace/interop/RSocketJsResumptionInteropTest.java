package io.millrace.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.testing.ChaosProxy;
import io.millrace.transport.netty.MillraceServer;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Resumption against rsocket-js (rsocket-core 1.0.0-alpha.3 on Node) in both directions, through
 * the same proxy as the rsocket-java tests: a request-stream of sequenced payloads (1 byte to 64
 * KiB) runs while the proxy resets the connection, and the receiver checks every item arrives once,
 * in order.
 */
@Timeout(120)
class RSocketJsResumptionInteropTest {
  static final int ITEMS = 3_000;

  @Test
  void rsocketJsClient_resumesWithMillraceServer() throws Exception {
    MillraceServer server = ResumptionInteropTest.resumableServer();
    try (ChaosProxy proxy = new ChaosProxy(server.address());
        RSocketJs.Script client =
            new RSocketJs.Script(
                "resume-stream-client.js",
                Integer.toString(proxy.port()),
                Integer.toString(ITEMS))) {
      int resets =
          ResumptionInteropTest.resetWhileRunning(
              proxy, client::progress, () -> client.process.isAlive() ? 0 : 1);
      int exit = client.await(60, TimeUnit.SECONDS);
      assertThat(exit).as(String.join("\n", client.lines)).isZero();
      assertThat(client.lines).contains("done " + ITEMS);
      assertThat(resets).isEqualTo(ResumptionInteropTest.RESETS);
      assertThat(proxy.accepted()).isGreaterThan(ResumptionInteropTest.RESETS);
    } finally {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void millraceClient_resumesWithRSocketJsServer() throws Exception {
    try (RSocketJs.Script server = new RSocketJs.Script("resume-stream-server.js")) {
      int port = server.awaitListening();
      ResumptionInteropTest.millraceClientResumesThroughResets(
          new InetSocketAddress(Interop.HOST, port));
      assertThat(server.process.isAlive()).as(String.join("\n", server.lines)).isTrue();
    }
  }
}
