package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.internal.ConnectionEngine;
import io.netty.channel.ChannelOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The transport suite over Unix domain sockets on the preferred I/O kind. */
class UnixTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "unix://" + socketPath();
  }

  @Test
  void connectionsHaveTheSocketBuffersTheBuildersSet() throws Exception {
    assumeTrue(
        Files.isReadable(Path.of("/proc/sys/net/core/wmem_max")), "Linux's limit is readable");
    CompletableFuture<Connection> accepted = new CompletableFuture<>();
    MillraceServer server =
        MillraceServer.builder()
            .listen(listenUri())
            .ioKind(ioKind())
            .unixSocketBufferBytes(600 * 1024)
            .acceptor(
                (setup, connection) -> {
                  accepted.complete(connection);
                  return new Responder() {};
                })
            .bind();
    MillraceClient client = MillraceClient.builder().ioKind(ioKind()).build(); // 1 MiB default
    try {
      Connection connection =
          client.connect(server.listeners().get(0), null, null).get(5, TimeUnit.SECONDS);
      // Linux reports twice what was set (its bookkeeping), capped by net.core.wmem_max/rmem_max.
      assertThat(sendBuffer(connection)).isGreaterThanOrEqualTo(expected(1024 * 1024, "wmem_max"));
      Connection serverSide = accepted.get(5, TimeUnit.SECONDS);
      assertThat(sendBuffer(serverSide)).isGreaterThanOrEqualTo(expected(600 * 1024, "wmem_max"));
      if (expected(1024 * 1024, "wmem_max") > expected(600 * 1024, "wmem_max")) {
        assertThat(sendBuffer(serverSide)).isLessThan(expected(1024 * 1024, "wmem_max"));
      }
    } finally {
      client.shutdownNow();
      server.shutdownNow();
      client.awaitTermination(5, TimeUnit.SECONDS);
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static int sendBuffer(Connection connection) {
    ChannelTransport transport = (ChannelTransport) ((ConnectionEngine) connection).transport();
    return transport.channel().config().getOption(ChannelOption.SO_SNDBUF);
  }

  /** What the kernel grants for {@code bytes}: the sysctl caps it, and it reports double. */
  private static int expected(int bytes, String sysctl) throws Exception {
    Path limit = Path.of("/proc/sys/net/core", sysctl);
    int max = Integer.parseInt(Files.readString(limit).trim());
    return 2 * Math.min(bytes, max);
  }
}
