package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code millrace echo-server} as a user runs it, in its own process: SIGTERM drains the
 * connections (open streams finish, new requests are refused) and the process exits 0.
 */
class EchoServerShutdownTest {

  /** Counts a stream's items, granting one at a time when told. */
  private static final class Items implements StreamListener {
    final List<String> items = new CopyOnWriteArrayList<>();
    final CompletableFuture<String> done = new CompletableFuture<>();

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      items.add(data.toString(StandardCharsets.UTF_8));
    }

    @Override
    public void onComplete(Stream stream) {
      done.complete("complete");
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      done.complete("error 0x" + Integer.toHexString(errorCode) + ": " + message);
    }
  }

  @Test
  void sigterm_drainsOpenStream_refusesNewRequests_exitsZero() throws Exception {
    try (EchoServerProcess server = new EchoServerProcess("--drain-timeout", "20");
        MillraceClient client = MillraceClient.builder().build()) {
      int port = server.port();
      Connection connection = client.connect("127.0.0.1", port).get(5, TimeUnit.SECONDS);
      CompletableFuture<CloseReason> draining = new CompletableFuture<>();
      connection.addListener(
          new ConnectionListener() {
            @Override
            public void onDraining(Connection c, CloseReason reason) {
              draining.complete(reason);
            }
          });
      Items items = new Items();
      // Ten items, granted one at a time: the stream stays open across the shutdown.
      Stream stream =
          connection.requestStream(
              null, Unpooled.copiedBuffer("10", StandardCharsets.UTF_8), 1, items);
      for (int i = 0; i < 500 && items.items.isEmpty(); i++) {
        Thread.sleep(10); // the first item shows the stream is open on the server
      }
      assertThat(items.items).containsExactly("0");

      server.process.destroy(); // SIGTERM

      CloseReason reason = draining.get(10, TimeUnit.SECONDS);
      assertThat(reason.kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_PEER);
      assertThat(reason.errorCode()).isEqualTo(ErrorCode.CONNECTION_CLOSE);

      Items refused = new Items();
      connection.requestResponse(
          null, Unpooled.copiedBuffer("late", StandardCharsets.UTF_8), refused);
      assertThat(refused.done.get(5, TimeUnit.SECONDS)).startsWith("error 0x202");

      connection.executor().submit(() -> stream.request(9)).get(5, TimeUnit.SECONDS);
      assertThat(items.done.get(10, TimeUnit.SECONDS)).isEqualTo("complete");
      assertThat(items.items).containsExactly("0", "1", "2", "3", "4", "5", "6", "7", "8", "9");

      String output = server.awaitExit();
      assertThat(server.process.exitValue()).isZero();
      assertThat(output).contains("shutting down").contains("stopped");
      assertThat(output).doesNotContain("forced");
      assertThat(connection.onClose().toCompletableFuture().get(5, TimeUnit.SECONDS).kind())
          .isEqualTo(CloseReason.Kind.CLOSED_BY_PEER);
    }
  }

  @Test
  void sigterm_streamNeverFinishes_forcedAfterDrainTimeout_exitsZero() throws Exception {
    try (EchoServerProcess server = new EchoServerProcess("--drain-timeout", "1");
        MillraceClient client = MillraceClient.builder().build()) {
      int port = server.port();
      Connection connection = client.connect("127.0.0.1", port).get(5, TimeUnit.SECONDS);
      Items items = new Items();
      connection.requestStream(
          null, Unpooled.copiedBuffer("1000", StandardCharsets.UTF_8), 1, items);
      for (int i = 0; i < 500 && items.items.isEmpty(); i++) {
        Thread.sleep(10);
      }
      long start = System.nanoTime();
      server.process.destroy();
      String output = server.awaitExit();
      assertThat(server.process.exitValue()).isZero();
      assertThat(output).contains("at most 1 s").contains("stopped");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
          .as("exits soon after the 1 s drain timeout")
          .isLessThan(8000);
      assertThat(items.done.get(5, TimeUnit.SECONDS)).startsWith("error");
    }
  }
}
