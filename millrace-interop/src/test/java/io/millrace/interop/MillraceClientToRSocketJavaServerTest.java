package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.buf;
import static io.millrace.interop.Interop.counting;
import static io.millrace.interop.Interop.echo;
import static io.millrace.interop.Interop.pattern;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.cli.EchoResponder;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.frame.ErrorCode;
import io.millrace.interop.MillraceRecorder.StreamError;
import io.millrace.transport.netty.MillraceClient;
import io.rsocket.RSocket;
import io.rsocket.lease.Lease;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;

/** Millrace's TCP client against an rsocket-java 1.1.5 server with the echo semantics. */
@Timeout(30)
class MillraceClientToRSocketJavaServerTest {
  private static final long UNBOUNDED = Integer.MAX_VALUE;

  private JavaEchoServer server;
  private MillraceClient client;
  private Responder clientResponder = Responder.REJECT_ALL;

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private Connection connect() throws Exception {
    return connect(UnaryOperator.identity(), ConnectionConfig.DEFAULT);
  }

  private Connection connect(
      UnaryOperator<io.rsocket.core.RSocketServer> serverConfig, ConnectionConfig config)
      throws Exception {
    server = JavaEchoServer.start(serverConfig);
    client = MillraceClient.builder().config(config).responder(clientResponder).build();
    return client.connect(HOST, server.port()).get(TIMEOUT.toMillis(), MILLISECONDS);
  }

  // ---------------------------------------------------------------- request-response

  @Test
  void requestResponse_dataAndMetadata_echoedByRSocketJava() throws Exception {
    Connection connection = connect();

    assertThat(echo(connection, "hello", "meta")).containsExactly(Received.of("hello", "meta"));
  }

  @Test
  void requestResponse_noMetadata_echoedWithoutMetadata() throws Exception {
    Connection connection = connect();

    assertThat(echo(connection, "plain", null)).containsExactly(Received.of("plain"));
  }

  @Test
  void requestResponse_errorPrefix_failsWithApplicationErrorAndMessage() throws Exception {
    Connection connection = connect();
    MillraceRecorder response = new MillraceRecorder();

    connection.requestResponse(null, buf("error:boom"), response);

    StreamError error = response.awaitError();
    assertThat(error.code).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(error).hasMessage("boom");
    assertThat(response.items).isEmpty();
  }

  // ---------------------------------------------------------------- fire-and-forget, metadata push

  @Test
  void fireAndForget_dataAndMetadata_receivedByRSocketJava() throws Exception {
    Connection connection = connect();

    connection.fireAndForget(buf("fnf-meta"), buf("fnf-data"));
    connection.fireAndForget(null, buf("fnf-plain"));

    assertThat(server.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
    assertThat(server.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-plain"));
    // The connection is still usable afterwards.
    assertThat(echo(connection, "after", null)).containsExactly(Received.of("after"));
  }

  @Test
  void metadataPush_metadata_receivedByRSocketJava() throws Exception {
    Connection connection = connect();

    connection.metadataPush(buf("pushed-metadata"));

    assertThat(server.metadataPushes.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo("pushed-metadata");
    assertThat(echo(connection, "after", null)).containsExactly(Received.of("after"));
  }

  // ---------------------------------------------------------------- request-stream

  @Test
  void requestStream_fivePayloadsUnbounded_receivesAllInOrderWithRequestMetadata()
      throws Exception {
    Connection connection = connect();
    MillraceRecorder stream = new MillraceRecorder();

    connection.requestStream(buf("stream-meta"), buf("5"), UNBOUNDED, stream);

    stream.awaitComplete();
    assertThat(stream.items).containsExactlyElementsOf(counting(5, "stream-meta"));
  }

  @Test
  void requestStream_nonNumericData_failsWithApplicationErrorAndMessage() throws Exception {
    Connection connection = connect();
    MillraceRecorder stream = new MillraceRecorder();

    connection.requestStream(null, buf("abc"), UNBOUNDED, stream);

    StreamError error = stream.awaitError();
    assertThat(error.code).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(error).hasMessage("request-stream data must be a decimal count, got 'abc'");
  }

  @Test
  void requestStream_millraceClientRequestsInBatches_serverEmitsOnlyWhatWasRequested()
      throws Exception {
    Connection connection = connect();
    MillraceRecorder recorder = new MillraceRecorder();

    Stream stream = connection.requestStream(null, buf("10"), 2, recorder);

    await("the first 2 payloads", () -> recorder.items.size() == 2);
    Thread.sleep(200);
    assertThat(server.streamEmitted).hasValue(2);
    assertThat(recorder.items).hasSize(2);

    connection.executor().execute(() -> stream.request(3));
    await("5 payloads", () -> recorder.items.size() == 5);
    Thread.sleep(200);
    assertThat(server.streamEmitted).hasValue(5);
    assertThat(recorder.done).isNotDone();

    connection.executor().execute(() -> stream.request(5));
    recorder.awaitComplete();
    assertThat(recorder.items).containsExactlyElementsOf(counting(10, null));
    assertThat(server.streamRequests).containsExactly(2L, 3L, 5L);
  }

  @Test
  void requestStream_millraceClientCancelsAfterThree_rsocketJavaObservesCancel() throws Exception {
    Connection connection = connect();
    MillraceRecorder recorder = new MillraceRecorder(3);

    connection.requestStream(null, buf(JavaEchoServer.FOREVER), 5, recorder);

    assertThat(server.streamCancelled.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();
    Thread.sleep(100);
    assertThat(recorder.items).containsExactlyElementsOf(counting(3, null));
    assertThat(recorder.done).isNotDone();
    assertThat(server.streamEmitted.get()).isBetween(3, 5);
    await("the stream to be released", () -> connection.activeStreams() == 0);
    assertThat(echo(connection, "after", null)).containsExactly(Received.of("after"));
  }

  // ---------------------------------------------------------------- request-channel

  @Test
  void requestChannel_requesterCompletesLater_echoesFirstPayloadAndRestThenCompletes()
      throws Exception {
    Connection connection = connect();
    ChannelRequester channel = new ChannelRequester();

    Stream stream =
        connection.requestChannel(buf("first-meta"), buf("first"), UNBOUNDED, false, channel);
    connection.executor().execute(() -> channel.send(stream, List.of(Received.of("a"))));

    await("the first two echoes", () -> channel.items.size() == 2);
    Thread.sleep(200);
    assertThat(channel.done).isNotDone();
    assertThat(server.channelInboundComplete).isNotDone();

    connection
        .executor()
        .execute(
            () -> {
              channel.send(stream, List.of(Received.of("b", "b-meta"), Received.of("c")));
              channel.completeWhenSent(stream);
            });

    channel.awaitComplete();
    assertThat(channel.items)
        .containsExactly(
            Received.of("first", "first-meta"),
            Received.of("a"),
            Received.of("b", "b-meta"),
            Received.of("c"));
    assertThat(server.channelReceived).containsExactlyElementsOf(channel.items);
    assertThat(server.channelInboundComplete).isDone();
  }

  @Test
  void requestChannel_firstPayloadAlsoCompletes_echoesItAndCompletes() throws Exception {
    Connection connection = connect();
    MillraceRecorder channel = new MillraceRecorder();

    connection.requestChannel(null, buf("only"), UNBOUNDED, true, channel);

    channel.awaitComplete();
    assertThat(channel.items).containsExactly(Received.of("only"));
  }

  // ---------------------------------------------------------------- fragmentation

  @Test
  void requestResponse_bothSidesFragmentAt64Bytes_largeDataAndMetadataArriveIntact()
      throws Exception {
    Connection connection =
        connect(s -> s.fragment(64), ConnectionConfig.builder().fragmentSize(64).build());
    String data = pattern("data", 8 * 1024);
    String metadata = pattern("meta", 3 * 1024);

    assertThat(echo(connection, data, metadata)).containsExactly(Received.of(data, metadata));
    connection.fireAndForget(buf(metadata), buf(data));
    assertThat(server.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of(data, metadata));
  }

  @Test
  void requestStreamAndChannel_bothSidesFragmentAt64Bytes_largePayloadsArriveIntact()
      throws Exception {
    Connection connection =
        connect(s -> s.fragment(64), ConnectionConfig.builder().fragmentSize(64).build());
    String metadata = pattern("stream-meta", 2 * 1024);
    MillraceRecorder stream = new MillraceRecorder();

    connection.requestStream(buf(metadata), buf("4"), UNBOUNDED, stream);

    stream.awaitComplete();
    assertThat(stream.items).containsExactlyElementsOf(counting(4, metadata));

    List<Received> outbound =
        List.of(
            Received.of(pattern("second", 5000), pattern("second-meta", 1500)),
            Received.of(pattern("third", 3000)));
    ChannelRequester channel = new ChannelRequester();
    Received first = Received.of(pattern("first", 4000), pattern("first-meta", 2500));
    Stream channelStream =
        connection.requestChannel(
            buf(first.metadata()), buf(first.data()), UNBOUNDED, false, channel);
    connection
        .executor()
        .execute(
            () -> {
              channel.send(channelStream, outbound);
              channel.completeWhenSent(channelStream);
            });

    channel.awaitComplete();
    assertThat(channel.items).containsExactly(first, outbound.get(0), outbound.get(1));
  }

  // ---------------------------------------------------------------- keepalive

  @Test
  void keepAlive_100msIntervalAnd2sLifetimeIdleFor5s_connectionStillUsable() throws Exception {
    Connection connection =
        connect(
            UnaryOperator.identity(),
            ConnectionConfig.builder()
                .keepAlive(Duration.ofMillis(100), Duration.ofSeconds(2))
                .build());
    assertThat(echo(connection, "before", null)).containsExactly(Received.of("before"));

    Thread.sleep(5_000); // over twice the lifetime (2 s, not 1: a loaded host may stall a loop)

    assertThat(connection.isOpen()).isTrue();
    assertThat(server.clientSocket.get().isDisposed()).isFalse();
    assertThat(echo(connection, "after", "idle")).containsExactly(Received.of("after", "idle"));
  }

  // ---------------------------------------------------------------- lease

  @Test
  void lease_rsocketJavaGrantsTwoRequests_twoSucceedAndThirdRejected() throws Exception {
    CountDownLatch leaseSent = new CountDownLatch(1);
    Connection connection =
        connect(
            s ->
                s.lease(
                    spec ->
                        spec.sender(
                            () ->
                                Flux.just(Lease.create(Duration.ofSeconds(30), 2))
                                    .doOnNext(lease -> leaseSent.countDown())
                                    .concatWith(Flux.never()))),
            ConnectionConfig.builder().lease(true).build());
    assertThat(leaseSent.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();

    // The LEASE frame may still be on its way: a request refused locally for want of a lease
    // consumes nothing, so retry until the first one goes through.
    List<Received> first = null;
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (first == null) {
      try {
        first = echo(connection, "one", null);
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(StreamError.class);
        assertThat(((StreamError) e.getCause()).code).isEqualTo(ErrorCode.REJECTED);
        assertThat(System.nanoTime() - deadline).isNegative();
        Thread.sleep(20);
      }
    }
    assertThat(first).containsExactly(Received.of("one"));
    assertThat(echo(connection, "two", null)).containsExactly(Received.of("two"));

    MillraceRecorder third = new MillraceRecorder();
    connection.requestResponse(null, buf("three"), third);

    assertThat(third.awaitError().code).isEqualTo(ErrorCode.REJECTED);
    assertThat(server.requestResponses).hasValue(2);
    assertThat(connection.isOpen()).isTrue();
  }

  // ---------------------------------------------------------------- requests from the server

  @Test
  void serverRequests_rsocketJavaServerRequestsMillraceClient_echoedByEchoResponder()
      throws Exception {
    clientResponder = new EchoResponder();
    Connection connection = connect();
    RSocket serverSide = server.clientSocket.get(TIMEOUT.toMillis(), MILLISECONDS);

    Received response =
        Interop.receive(
            serverSide.requestResponse(Interop.payload("from-server", "m")).block(TIMEOUT));
    List<Received> stream =
        serverSide
            .requestStream(Interop.payload("3", "s"))
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(response).isEqualTo(Received.of("from-server", "m"));
    assertThat(stream).containsExactlyElementsOf(counting(3, "s"));
    // Requests from both sides share the connection.
    assertThat(echo(connection, "from-client", null)).containsExactly(Received.of("from-client"));
  }
}
