package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.transport.netty.MillraceServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code millrace call --reconnect} as a user runs it, against the echo server restarted on the
 * same port while calls repeat: the client comes back by itself, calls made meanwhile wait for it
 * (or fail at once with {@code --fail-fast}), and every call is accounted for.
 */
class CallReconnectTest {
  private MillraceServer server;

  @AfterEach
  void tearDown() throws Exception {
    if (server != null) {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static MillraceServer echoServer(int port) throws InterruptedException {
    EchoResponder responder = new EchoResponder();
    return MillraceServer.builder()
        .bindAddress("127.0.0.1", port)
        .acceptor((setup, connection) -> responder)
        .bind();
  }

  /** Runs {@code millrace call ...} on another thread; out and err collect what it prints. */
  private static CompletableFuture<Integer> call(
      StringWriter out, StringWriter err, String... args) {
    return CompletableFuture.supplyAsync(
        () ->
            new CommandLine(new Main())
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args));
  }

  private static List<String> lines(StringWriter w) {
    String s = w.toString();
    return s.isEmpty() ? List.of() : Arrays.asList(s.split("\n"));
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("in time").isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  @Test
  void callsThatRepeatWaitThroughAServerRestart() throws Exception {
    server = echoServer(0);
    int port = server.port();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CompletableFuture<Integer> code =
        call(
            out,
            err,
            "call",
            "--reconnect",
            "--port",
            Integer.toString(port),
            "--interaction",
            "request-response",
            "--data",
            "hi",
            "--repeat",
            "40",
            "--interval",
            "20",
            "--timeout",
            "20");
    waitFor(() -> lines(out).size() >= 10);
    server.shutdown(); // graceful: the call in flight, if any, is answered
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    int answeredBefore = lines(out).size();
    Thread.sleep(300); // the client is refused meanwhile; its next call waits
    assertThat(lines(out).size()).isLessThanOrEqualTo(answeredBefore + 1);
    server = echoServer(port);

    int exit = code.get(30, TimeUnit.SECONDS);
    List<String> errors = lines(err).stream().filter(l -> l.startsWith("ERROR")).toList();
    // A call that crossed the server's CONNECTION_CLOSE on the wire is refused with REJECTED
    // (never processed); any other failure is a bug.
    assertThat(errors).allMatch(l -> l.startsWith("ERROR 0x00000202"));
    assertThat(errors.size()).isLessThanOrEqualTo(1);
    assertThat(lines(out)).hasSize(40 - errors.size()).allMatch("hi"::equals);
    assertThat(exit).isEqualTo(errors.isEmpty() ? 0 : 1);
    assertThat(err.toString()).contains("millrace: reconnected");
  }

  @Test
  void failFastRefusesCallsWhileTheServerIsDown() throws Exception {
    server = echoServer(0);
    int port = server.port();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CompletableFuture<Integer> code =
        call(
            out,
            err,
            "call",
            "--reconnect",
            "--fail-fast",
            "--port",
            Integer.toString(port),
            "--interaction",
            "request-response",
            "--data",
            "hi",
            "--repeat",
            "400",
            "--interval",
            "10",
            "--timeout",
            "20");
    waitFor(() -> lines(out).size() >= 5);
    server.shutdown();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    waitFor(() -> err.toString().contains("not sent: no connection"));
    server = echoServer(port);

    assertThat(code.get(30, TimeUnit.SECONDS)).isEqualTo(1);
    long refused = lines(err).stream().filter(l -> l.startsWith("ERROR 0x00000202")).count();
    long otherErrors =
        lines(err).stream()
            .filter(l -> l.startsWith("ERROR") && !l.startsWith("ERROR 0x00000202"))
            .count();
    assertThat(refused).isPositive();
    assertThat(otherErrors).isZero();
    assertThat(lines(out)).hasSize((int) (400 - refused)).allMatch("hi"::equals);
    assertThat(err.toString()).contains("millrace: reconnected");
  }

  @Test
  void theFirstConnectWaitsForAServerThatIsNotUpYet() throws Exception {
    server = echoServer(0);
    int port = server.port();
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CompletableFuture<Integer> code =
        call(
            out,
            err,
            "call",
            "--reconnect",
            "--port",
            Integer.toString(port),
            "--interaction",
            "request-stream",
            "--data",
            "3",
            "--timeout",
            "20");
    Thread.sleep(300);
    assertThat(code).isNotDone();
    server = echoServer(port);
    assertThat(code.get(30, TimeUnit.SECONDS)).as(err.toString()).isZero();
    assertThat(lines(out)).hasSize(3);
  }
}
