package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Resumption;
import io.millrace.testing.ChaosProxy;
import io.millrace.transport.netty.MillraceServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code millrace call --resume} as a user runs it, against the echo server with resumption (what
 * {@code echo-server --resume} serves), through a proxy that resets the connection 100 times while
 * a request-stream runs: every item is printed once, in order, and the call exits 0.
 */
class CallResumeTest {
  @Test
  void requestStream_throughAHundredResets_printsEveryItemOnceInOrder() throws Exception {
    EchoResponder responder = new EchoResponder();
    MillraceServer server =
        MillraceServer.builder()
            .config(ConnectionConfig.builder().resumption(Resumption.defaults()).build())
            .acceptor((setup, connection) -> responder)
            .bind();
    try (ChaosProxy proxy = new ChaosProxy(server.address())) {
      int items = 30_000;
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      CompletableFuture<Integer> code =
          CompletableFuture.supplyAsync(
              () ->
                  new CommandLine(new Main())
                      .setOut(new PrintWriter(out))
                      .setErr(new PrintWriter(err))
                      .execute(
                          "call",
                          "--resume",
                          "--port",
                          Integer.toString(proxy.port()),
                          "--interaction",
                          "request-stream",
                          "--data",
                          Integer.toString(items),
                          "--request-n",
                          "8",
                          "--timeout",
                          "60"));
      int resets = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
      while (resets < 100 && !code.isDone() && System.nanoTime() < deadline) {
        int accepted = proxy.accepted();
        int printed = out.getBuffer().length();
        // Reset once the client is back and something has passed on the new connection.
        while (!code.isDone()
            && (proxy.open() == 0 || out.getBuffer().length() == printed)
            && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        if (code.isDone()) {
          break;
        }
        proxy.reset();
        resets++;
        while (proxy.accepted() == accepted && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
      }
      assertThat(code.get(60, TimeUnit.SECONDS)).as(err.toString()).isZero();
      assertThat(resets).isEqualTo(100);
      String[] lines = out.toString().split("\n");
      assertThat(lines).hasSize(items);
      for (int i = 0; i < items; i++) {
        assertThat(lines[i]).as("line %d", i).isEqualTo(Integer.toString(i));
      }
      assertThat(err.toString()).contains("millrace: resumed").doesNotContain("rejected");
    } finally {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
