package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Resumption;
import io.millrace.streams.ReactiveRequester;
import io.millrace.testing.ChaosProxy;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * RPC over a resumable connection that breaks: calls made after the session resumed over a new
 * connection are answered, and their handlers are told the caller's new address, not the one the
 * session began with.
 */
class RpcResumptionTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final TestService service = new TestService();
  private MillraceServer server;
  private MillraceClient client;
  private ChaosProxy proxy;

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static ConnectionConfig config() {
    return ConnectionConfig.builder()
        .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
        .keepAlive(Duration.ofMillis(200), Duration.ofSeconds(10)) // a stall does not resume
        .resumption(
            Resumption.builder().backoff(Duration.ofMillis(10), Duration.ofMillis(200)).build())
        .build();
  }

  private String peer(RpcClient rpc) {
    StringValue answer =
        Mono.from(rpc.unary(TestService.ECHO, text("peer"), CallOptions.DEFAULT)).block(WAIT);
    return answer.getValue();
  }

  @Test
  void callsAfterAResume_reachTheServer_andNameTheCallersNewAddress() throws Exception {
    RpcServer rpcServer = RpcServer.builder().service(service.definition()).build();
    server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .config(config())
            .eventLoopThreads(1)
            .acceptor(rpcServer::responder)
            .bind();
    proxy = new ChaosProxy(server.address());
    client = MillraceClient.builder().config(config()).build();
    Connection connection = client.connect("127.0.0.1", proxy.port()).get(10, TimeUnit.SECONDS);
    RpcClient rpc = RpcClient.of(ReactiveRequester.of(connection));

    // The server sees the proxy's side of each connection: a new source port per connection.
    String first = peer(rpc);
    assertThat(first).startsWith("/127.0.0.1:").endsWith(" tls=false");
    assertThat(peer(rpc)).as("the same connection").isEqualTo(first);
    int accepted = proxy.accepted();

    proxy.reset(); // both connections through the proxy are cut; the client resumes
    // The reset runs on the proxy's loop: a call made before it could still reach the server over
    // the old connection. Wait for the new connection the reset causes.
    long until = System.nanoTime() + WAIT.toNanos();
    while (proxy.accepted() == accepted && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(proxy.accepted())
        .as("the session came back over a new connection")
        .isGreaterThan(accepted);

    String resumed = peer(rpc);
    assertThat(resumed).startsWith("/127.0.0.1:").isNotEqualTo(first);
    assertThat(peer(rpc)).as("later calls, the same").isEqualTo(resumed);
    assertThat(connection.isOpen()).isTrue();
  }
}
