package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.buf;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Millrace against rsocket-java 1.1.5 on the stack it ships with (reactor-core 3.4, reactor-netty
 * 1.0, Netty 4.1), which cannot share a class path with Millrace's Netty 4.2: the peer runs in a
 * JVM of its own (module millrace-interop-netty41), in both roles. The other interop tests run
 * rsocket-java on Netty 4.2, as most of them need it in-process.
 */
@Timeout(120)
class Netty41StackInteropTest {
  private static final Path PEER_MODULE = Path.of("..", "millrace-interop-netty41", "target");

  private Process peer;
  private Path peerOutput;
  private MillraceServer server;
  private MillraceClient client;

  @AfterEach
  void tearDown() throws Exception {
    if (client != null) {
      client.shutdownNow();
    }
    if (server != null) {
      server.shutdownNow();
    }
    if (peer != null) {
      peer.destroyForcibly();
      peer.waitFor(10, TimeUnit.SECONDS);
    }
    if (peerOutput != null) {
      Files.deleteIfExists(peerOutput);
    }
  }

  private void startPeer(String... args) throws Exception {
    String classpath =
        PEER_MODULE.resolve("classes")
            + File.pathSeparator
            + Files.readString(PEER_MODULE.resolve("peer.classpath")).trim();
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath,
                "io.millrace.interop.netty41.Peer"));
    command.addAll(List.of(args));
    peerOutput = Files.createTempFile("netty41-peer", ".log");
    peer =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(peerOutput.toFile())
            .start();
  }

  private String peerOutput() throws Exception {
    return Files.readString(peerOutput, StandardCharsets.UTF_8);
  }

  private String awaitPeerLine(Pattern pattern) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Matcher m = pattern.matcher(peerOutput());
      if (m.find()) {
        return m.groupCount() > 0 ? m.group(1) : m.group();
      }
      Thread.sleep(20);
    }
    throw new AssertionError("the peer never printed " + pattern + ":\n" + peerOutput());
  }

  @Test
  void rsocketJavaOnNetty41Client_againstMillraceServer_everyScenarioPasses() throws Exception {
    RecordingResponder responder = new RecordingResponder();
    server =
        MillraceServer.builder()
            .bindAddress(HOST, 0)
            .config(ConnectionConfig.builder().fragmentSize(64).build())
            .acceptor((setup, connection) -> responder)
            .bind();
    startPeer("client", Integer.toString(server.port()));
    assertThat(peer.waitFor(90, TimeUnit.SECONDS)).as("the peer finishes").isTrue();
    String output = peerOutput();
    assertThat(output).containsPattern("NETTY 4\\.1\\.");
    assertThat(output)
        .contains(
            "OK request-response",
            "OK request-response-error",
            "OK request-stream-limit-rate",
            "OK request-channel",
            "OK fire-and-forget",
            "OK fragmented-100k",
            "OK cancelled-channels-5000",
            "DONE 0");
    assertThat(peer.exitValue()).as(output).isZero();
    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
  }

  @Test
  void millraceClient_againstRSocketJavaOnNetty41Server() throws Exception {
    startPeer("server");
    int port = Integer.parseInt(awaitPeerLine(Pattern.compile("PORT (\\d+)")));
    assertThat(peerOutput()).containsPattern("NETTY 4\\.1\\.");
    client =
        MillraceClient.builder()
            .config(ConnectionConfig.builder().fragmentSize(64).build())
            .build();
    Connection connection = client.connect(HOST, port).get(TIMEOUT.toMillis(), MILLISECONDS);

    MillraceRecorder echo = new MillraceRecorder();
    connection.requestResponse(buf("meta"), buf("hello"), echo);
    echo.awaitComplete();
    assertThat(echo.items).containsExactly(Received.of("hello", "meta"));

    MillraceRecorder stream = new MillraceRecorder();
    connection.requestStream(buf("m"), buf("5"), Integer.MAX_VALUE, stream);
    stream.awaitComplete();
    assertThat(stream.items)
        .containsExactly(
            Received.of("0", "m"),
            Received.of("1", "m"),
            Received.of("2", "m"),
            Received.of("3", "m"),
            Received.of("4", "m"));

    String big = Interop.pattern("big", 100_000);
    MillraceRecorder fragmented = new MillraceRecorder();
    connection.requestResponse(buf("big-meta"), buf(big), fragmented);
    fragmented.awaitComplete();
    assertThat(fragmented.items).containsExactly(Received.of(big, "big-meta"));

    connection.fireAndForget(buf("fnf-meta"), buf("fnf-data"));
    awaitPeerLine(Pattern.compile("FNF fnf-data\\|fnf-meta"));

    // A channel the Millrace requester cancels ends on rsocket-java's side too.
    MillraceRecorder channel = new MillraceRecorder(1);
    connection.requestChannel(null, buf("first"), Integer.MAX_VALUE, false, channel);
    awaitPeerLine(Pattern.compile("CHANNEL_CANCELLED"));
    await("the channel released", () -> connection.activeStreams() == 0);

    // Closing gracefully: rsocket-java answers the barrier KEEPALIVE, so it is quick.
    long start = System.nanoTime();
    connection.close();
    CloseReason reason = connection.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(reason.kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    peer.getOutputStream().close(); // the peer stops when its input ends
    assertThat(peer.waitFor(10, TimeUnit.SECONDS)).isTrue();
  }
}
