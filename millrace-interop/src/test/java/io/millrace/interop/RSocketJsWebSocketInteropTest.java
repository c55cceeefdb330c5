package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.buf;
import static io.millrace.interop.Interop.counting;
import static io.millrace.interop.Interop.echo;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.frame.ErrorCode;
import io.millrace.interop.MillraceRecorder.StreamError;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.TransportUri;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * rsocket-js 1.0.0-alpha.3 over WebSocket on Node (rsocket-websocket-client and
 * rsocket-websocket-server on the ws package) against Millrace in both directions, with the echo
 * semantics of the TCP interop tests. The client script ({@code ws-client.js}) runs
 * request-response, request-stream, request-channel and fire-and-forget against a Millrace {@code
 * ws} listener and prints what comes back, which is compared line by line. A Millrace client does
 * the same against the server script ({@code ws-server.js}); rsocket-js's server takes upgrades on
 * any path, and the client asks for {@code /}.
 */
@Timeout(120)
class RSocketJsWebSocketInteropTest {
  private static final long UNBOUNDED = Integer.MAX_VALUE;
  private static final Pattern RESULT =
      Pattern.compile(
          "(request-response|request-stream|request-channel|fire-and-forget|done)\\b.*");

  private static RSocketJs.Script jsServer;
  private static int jsServerPort;

  private MillraceServer server;
  private MillraceClient client;

  @BeforeAll
  static void startJsServer() throws Exception {
    jsServer = new RSocketJs.Script("ws-server.js");
    jsServerPort = jsServer.awaitListening();
  }

  @AfterAll
  static void stopJsServer() {
    if (jsServer != null) {
      jsServer.close();
    }
  }

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A line as the scripts print a payload: "KIND data=D", then " metadata=M" if it has some. */
  private static String line(String kind, Received payload) {
    return kind
        + " data="
        + payload.data()
        + (payload.metadata() == null ? "" : " metadata=" + payload.metadata());
  }

  private Connection connectToJsServer() throws Exception {
    client = MillraceClient.builder().build();
    return client
        .connect("ws://" + HOST + ":" + jsServerPort + "/")
        .get(TIMEOUT.toMillis(), MILLISECONDS);
  }

  // ---------------------------------------------------------------- rsocket-js client

  @Test
  void rsocketJsClient_millraceWebSocketServer_everyInteractionAnsweredAsEchoed() throws Exception {
    RecordingResponder responder = new RecordingResponder();
    server =
        MillraceServer.builder()
            .listen("ws://" + HOST + ":0/rsocket")
            .acceptor((setup, connection) -> responder)
            .bind();
    String url = server.listener(TransportUri.Scheme.WS).toString();
    List<String> expected = new ArrayList<>();
    expected.add(line("request-response", Received.of("hello", "meta")));
    expected.add(line("request-response", Received.of("plain")));
    expected.add("request-response error code=513 message=boom");
    for (Received item : counting(5, "stream-meta")) {
      expected.add(line("request-stream", item));
    }
    expected.add("request-stream complete");
    expected.add(line("request-channel", Received.of("first", "first-meta")));
    expected.add(line("request-channel", Received.of("a")));
    expected.add(line("request-channel", Received.of("b", "b-meta")));
    expected.add("request-channel complete");
    expected.add("fire-and-forget sent");
    expected.add(line("request-response", Received.of("after")));
    expected.add("done");

    try (RSocketJs.Script script = new RSocketJs.Script("ws-client.js", url)) {
      int exit = script.await(60, TimeUnit.SECONDS);

      assertThat(exit).as(String.join("\n", script.lines)).isZero();
      assertThat(script.lines.stream().filter(l -> RESULT.matcher(l).matches()).toList())
          .containsExactlyElementsOf(expected);
    }
    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
    assertThat(responder.maxStreamCredit.get()).isBetween(1L, 2L);
  }

  // ---------------------------------------------------------------- Millrace client

  @Test
  void millraceClient_requestResponse_echoedByRSocketJsServer() throws Exception {
    Connection connection = connectToJsServer();

    assertThat(echo(connection, "hello", "meta")).containsExactly(Received.of("hello", "meta"));
    assertThat(echo(connection, "plain", null)).containsExactly(Received.of("plain"));
    MillraceRecorder failing = new MillraceRecorder();
    connection.requestResponse(null, buf("error:boom"), failing);
    StreamError error = failing.awaitError();
    assertThat(error.code).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(error).hasMessage("boom");
  }

  @Test
  void millraceClient_requestStreamInTwoGrants_allFromRSocketJsServerInOrder() throws Exception {
    Connection connection = connectToJsServer();
    MillraceRecorder recorder = new MillraceRecorder();

    Stream stream = connection.requestStream(buf("stream-meta"), buf("5"), 2, recorder);
    await("the first 2 payloads", () -> recorder.items.size() == 2);
    Thread.sleep(200);
    assertThat(recorder.items).hasSize(2);
    connection.executor().execute(() -> stream.request(3));

    recorder.awaitComplete();
    assertThat(recorder.items).containsExactlyElementsOf(counting(5, "stream-meta"));
  }

  @Test
  void millraceClient_requestChannel_everyPayloadEchoedByRSocketJsServer() throws Exception {
    Connection connection = connectToJsServer();
    ChannelRequester channel = new ChannelRequester();

    Stream stream =
        connection.requestChannel(buf("first-meta"), buf("first"), UNBOUNDED, false, channel);
    connection
        .executor()
        .execute(
            () -> {
              channel.send(stream, List.of(Received.of("a"), Received.of("b", "b-meta")));
              channel.completeWhenSent(stream);
            });

    channel.awaitComplete();
    assertThat(channel.items)
        .containsExactly(
            Received.of("first", "first-meta"), Received.of("a"), Received.of("b", "b-meta"));
  }

  @Test
  void millraceClient_fireAndForget_printedByRSocketJsServer() throws Exception {
    Connection connection = connectToJsServer();

    connection.fireAndForget(buf("fnf-meta"), buf("fnf-data"));

    String expected = line("fire-and-forget", Received.of("fnf-data", "fnf-meta"));
    await("the server to print the fire-and-forget", () -> jsServer.lines.contains(expected));
    assertThat(echo(connection, "after", null)).containsExactly(Received.of("after"));
  }
}
