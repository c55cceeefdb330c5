package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.counting;
import static io.millrace.interop.Interop.echo;
import static io.millrace.interop.Interop.pattern;
import static io.millrace.interop.Interop.payload;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.LeaseIssuer;
import io.millrace.transport.netty.MillraceServer;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.exceptions.RejectedException;
import io.rsocket.transport.netty.client.TcpClientTransport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** An rsocket-java 1.1.5 client against Millrace's TCP server with the echo semantics. */
@Timeout(30)
class RSocketJavaClientToMillraceServerTest {
  private final RecordingResponder responder = new RecordingResponder();
  private final CompletableFuture<Connection> serverConnection = new CompletableFuture<>();
  private MillraceServer server;
  private RSocket rsocket;

  @AfterEach
  void tearDown() {
    if (rsocket != null) {
      rsocket.dispose();
      rsocket.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
    }
    if (server != null) {
      server.close();
    }
  }

  private RSocket connect() throws Exception {
    return connect(ConnectionConfig.DEFAULT, UnaryOperator.identity());
  }

  private RSocket connect(ConnectionConfig config, UnaryOperator<RSocketConnector> clientConfig)
      throws Exception {
    server =
        MillraceServer.builder()
            .bindAddress(HOST, 0)
            .config(config)
            .acceptor(
                (setup, connection) -> {
                  serverConnection.complete(connection);
                  return responder;
                })
            .bind();
    rsocket =
        clientConfig
            .apply(RSocketConnector.create())
            .connect(TcpClientTransport.create(HOST, server.port()))
            .block(TIMEOUT);
    return rsocket;
  }

  // ---------------------------------------------------------------- request-response

  @Test
  void requestResponse_dataAndMetadata_echoedByMillrace() throws Exception {
    RSocket rsocket = connect();

    assertThat(echo(rsocket, "hello", "meta")).isEqualTo(Received.of("hello", "meta"));
  }

  @Test
  void requestResponse_noMetadata_echoedWithoutMetadata() throws Exception {
    RSocket rsocket = connect();

    assertThat(echo(rsocket, "plain", null)).isEqualTo(Received.of("plain"));
  }

  @Test
  void requestResponse_errorPrefix_failsWithApplicationErrorExceptionAndMessage() throws Exception {
    RSocket rsocket = connect();

    assertThatThrownBy(() -> rsocket.requestResponse(payload("error:boom", null)).block(TIMEOUT))
        .isInstanceOf(ApplicationErrorException.class)
        .hasMessage("boom");
    assertThat(echo(rsocket, "after", null)).isEqualTo(Received.of("after"));
  }

  // ---------------------------------------------------------------- fire-and-forget, metadata push

  @Test
  void fireAndForget_dataAndMetadata_receivedByMillrace() throws Exception {
    RSocket rsocket = connect();

    rsocket.fireAndForget(payload("fnf-data", "fnf-meta")).block(TIMEOUT);
    rsocket.fireAndForget(payload("fnf-plain", null)).block(TIMEOUT);

    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-data", "fnf-meta"));
    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of("fnf-plain"));
  }

  @Test
  void metadataPush_metadata_receivedByMillrace() throws Exception {
    RSocket rsocket = connect();

    rsocket.metadataPush(payload("", "pushed-metadata")).block(TIMEOUT);

    assertThat(responder.metadataPushes.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo("pushed-metadata");
    assertThat(echo(rsocket, "after", null)).isEqualTo(Received.of("after"));
  }

  // ---------------------------------------------------------------- request-stream

  @Test
  void requestStream_fivePayloads_receivesAllInOrderWithRequestMetadata() throws Exception {
    RSocket rsocket = connect();
    JavaRecorder recorder = JavaRecorder.unbounded();

    rsocket.requestStream(payload("5", "stream-meta")).subscribe(recorder);

    recorder.awaitComplete();
    assertThat(recorder.items).containsExactlyElementsOf(counting(5, "stream-meta"));
  }

  @Test
  void requestStream_nonNumericData_failsWithApplicationErrorExceptionAndMessage()
      throws Exception {
    RSocket rsocket = connect();

    assertThatThrownBy(
            () -> rsocket.requestStream(payload("abc", null)).collectList().block(TIMEOUT))
        .isInstanceOf(ApplicationErrorException.class)
        .hasMessage("request-stream data must be a decimal count, got 'abc'");
  }

  @Test
  void requestStream_rsocketJavaSubscriberRequestsInBatches_millraceSendsOnlyWhatWasRequested()
      throws Exception {
    RSocket rsocket = connect();
    JavaRecorder recorder = JavaRecorder.requesting(2);

    rsocket.requestStream(payload("10", null)).subscribe(recorder);

    await("the first 2 payloads", () -> recorder.items.size() == 2);
    Thread.sleep(200);
    assertThat(recorder.items).hasSize(2);

    recorder.grant(1);
    await("3 payloads", () -> recorder.items.size() == 3);
    Thread.sleep(200);
    assertThat(recorder.items).hasSize(3);
    assertThat(recorder.done).isNotDone();

    recorder.grant(7);
    recorder.awaitComplete();
    assertThat(recorder.items).containsExactlyElementsOf(counting(10, null));
    assertThat(recorder.overflowed).isFalse();
    assertThat(responder.maxStreamCredit.get()).isLessThanOrEqualTo(7);
  }

  @Test
  void requestStream_limitRateTwo_receivesAllInOrderAndMillraceCreditNeverExceedsTwo()
      throws Exception {
    RSocket rsocket = connect();

    List<Received> items =
        rsocket
            .requestStream(payload("100", "m"))
            .limitRate(2)
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(items).containsExactlyElementsOf(counting(100, "m"));
    assertThat(responder.maxStreamCredit.get()).isBetween(1L, 2L);
  }

  @Test
  void requestStream_rsocketJavaCancelsAfterThree_millraceResponderObservesCancel()
      throws Exception {
    RSocket rsocket = connect();
    JavaRecorder recorder = JavaRecorder.cancellingAfter(5, 3);

    rsocket.requestStream(payload(RecordingResponder.FOREVER, null)).subscribe(recorder);

    assertThat(responder.foreverCancelled.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();
    assertThat(recorder.items).containsExactlyElementsOf(counting(3, null));
    assertThat(responder.foreverSent.get()).isBetween(3, 5);
    Connection connection = serverConnection.get();
    await("the stream to be released", () -> connection.activeStreams() == 0);
    assertThat(echo(rsocket, "after", null)).isEqualTo(Received.of("after"));
  }

  // ---------------------------------------------------------------- request-channel

  @Test
  void requestChannel_requesterCompletesLater_echoesFirstPayloadAndRestThenCompletes()
      throws Exception {
    RSocket rsocket = connect();
    Sinks.Many<Payload> outbound = Sinks.many().unicast().onBackpressureBuffer();
    JavaRecorder recorder = JavaRecorder.unbounded();

    rsocket.requestChannel(outbound.asFlux()).subscribe(recorder);
    outbound.tryEmitNext(payload("first", "first-meta")).orThrow();
    outbound.tryEmitNext(payload("a", null)).orThrow();

    await("the first two echoes", () -> recorder.items.size() == 2);
    Thread.sleep(200);
    assertThat(recorder.done).isNotDone();

    outbound.tryEmitNext(payload("b", "b-meta")).orThrow();
    outbound.tryEmitComplete().orThrow();

    recorder.awaitComplete();
    assertThat(recorder.items)
        .containsExactly(
            Received.of("first", "first-meta"), Received.of("a"), Received.of("b", "b-meta"));
    await("the channel to be released", () -> serverConnection.join().activeStreams() == 0);
  }

  // ---------------------------------------------------------------- fragmentation

  @Test
  void requestResponse_bothSidesFragmentAt64Bytes_largeDataAndMetadataArriveIntact()
      throws Exception {
    RSocket rsocket =
        connect(ConnectionConfig.builder().fragmentSize(64).build(), c -> c.fragment(64));
    String data = pattern("data", 8 * 1024);
    String metadata = pattern("meta", 3 * 1024);

    assertThat(echo(rsocket, data, metadata)).isEqualTo(Received.of(data, metadata));
    rsocket.fireAndForget(payload(data, metadata)).block(TIMEOUT);
    assertThat(responder.fireAndForgets.poll(TIMEOUT.toMillis(), MILLISECONDS))
        .isEqualTo(Received.of(data, metadata));
  }

  @Test
  void requestStreamAndChannel_bothSidesFragmentAt64Bytes_largePayloadsArriveIntact()
      throws Exception {
    RSocket rsocket =
        connect(ConnectionConfig.builder().fragmentSize(64).build(), c -> c.fragment(64));
    String metadata = pattern("stream-meta", 2 * 1024);

    List<Received> stream =
        rsocket
            .requestStream(payload("4", metadata))
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(stream).containsExactlyElementsOf(counting(4, metadata));

    List<Received> sent =
        List.of(
            Received.of(pattern("first", 4000), pattern("first-meta", 2500)),
            Received.of(pattern("second", 5000), pattern("second-meta", 1500)),
            Received.of(pattern("third", 3000)));
    List<Received> echoed =
        rsocket
            .requestChannel(
                reactor.core.publisher.Flux.fromIterable(sent)
                    .map(r -> payload(r.data(), r.metadata())))
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);

    assertThat(echoed).containsExactlyElementsOf(sent);
  }

  // ---------------------------------------------------------------- keepalive

  @Test
  void keepAlive_100msIntervalAnd2sLifetimeIdleFor5s_connectionStillUsable() throws Exception {
    RSocket rsocket =
        connect(
            ConnectionConfig.DEFAULT,
            c -> c.keepAlive(Duration.ofMillis(100), Duration.ofSeconds(2)));
    assertThat(echo(rsocket, "before", null)).isEqualTo(Received.of("before"));

    Thread.sleep(5_000); // over twice the lifetime (2 s, not 1: a loaded host may stall a loop)

    assertThat(rsocket.isDisposed()).isFalse();
    assertThat(serverConnection.get().isOpen()).isTrue();
    assertThat(echo(rsocket, "after", "idle")).isEqualTo(Received.of("after", "idle"));
  }

  // ---------------------------------------------------------------- lease

  @Test
  void lease_millraceGrantsTwoRequests_twoSucceedAndThirdRejected() throws Exception {
    RSocket rsocket =
        connect(
            ConnectionConfig.builder().leaseIssuer(LeaseIssuer.fixed(30_000, 2)).build(),
            c -> c.lease(spec -> spec.maxPendingRequests(0)));
    await("the lease to arrive", () -> rsocket.availability() > 0);

    assertThat(echo(rsocket, "one", null)).isEqualTo(Received.of("one"));
    assertThat(echo(rsocket, "two", "m")).isEqualTo(Received.of("two", "m"));

    assertThatThrownBy(() -> rsocket.requestResponse(payload("three", null)).block(TIMEOUT))
        .isInstanceOf(RejectedException.class);
    assertThat(responder.requestResponses).hasValue(2);
    assertThat(rsocket.isDisposed()).isFalse();
  }

  // ---------------------------------------------------------------- requests from the server

  @Test
  void serverRequests_millraceServerRequestsRSocketJavaClient_echoedOnEvenStreams()
      throws Exception {
    RSocket rsocket =
        connect(
            ConnectionConfig.DEFAULT,
            c ->
                c.acceptor(
                    SocketAcceptor.forRequestResponse(
                        p -> {
                          Received request = Interop.receive(p);
                          return Mono.just(payload(request.data(), request.metadata()));
                        })));
    Connection connection = serverConnection.get(TIMEOUT.toMillis(), MILLISECONDS);
    MillraceRecorder response = new MillraceRecorder();

    io.millrace.core.Stream stream =
        connection.requestResponse(Interop.buf("m"), Interop.buf("from-server"), response);

    response.awaitComplete();
    assertThat(response.items).containsExactly(Received.of("from-server", "m"));
    assertThat(stream.streamId() % 2).isZero();
    // Requests from both sides share the connection.
    assertThat(echo(rsocket, "from-client", null)).isEqualTo(Received.of("from-client"));
  }
}
