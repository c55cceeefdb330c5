package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static io.millrace.interop.Interop.TIMEOUT;
import static io.millrace.interop.Interop.await;
import static io.millrace.interop.Interop.buf;
import static io.millrace.interop.Interop.payload;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.SetupException;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.exceptions.ConnectionCloseException;
import io.rsocket.exceptions.ConnectionErrorException;
import io.rsocket.exceptions.RejectedSetupException;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Cancellation and the end of a connection between Millrace and rsocket-java 1.1.5, both
 * directions: channel cancel from either side, CONNECTION_CLOSE and ERROR on stream 0. What
 * rsocket-java does with each is written down in docs/design.md ("rsocket-java and the end of a
 * connection").
 */
@Timeout(60)
class LifecycleInteropTest {
  private final List<AutoCloseable> resources = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  private MillraceServer millraceServer(ConnectionConfig config, Responder responder)
      throws Exception {
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress(HOST, 0)
            .config(config)
            .acceptor((setup, connection) -> responder)
            .bind();
    resources.add(server::shutdownNow);
    return server;
  }

  private RSocket rsocketJavaClient(int port) {
    RSocket rsocket =
        RSocketConnector.create().connect(TcpClientTransport.create(HOST, port)).block(TIMEOUT);
    resources.add(rsocket::dispose);
    return rsocket;
  }

  private Connection millraceClient(int port) throws Exception {
    MillraceClient client = MillraceClient.builder().build();
    resources.add(client::shutdownNow);
    return client.connect(HOST, port).get(TIMEOUT.toMillis(), MILLISECONDS);
  }

  private CloseableChannel rsocketJavaServer(RSocketServer server) {
    CloseableChannel channel = server.bind(TcpServerTransport.create(HOST, 0)).block(TIMEOUT);
    resources.add(channel::dispose);
    return channel;
  }

  /** A Millrace channel responder that echoes while it can and counts how its channels end. */
  private static final class CountingChannels implements Responder {
    final AtomicInteger opened = new AtomicInteger();
    final AtomicInteger cancelled = new AtomicInteger();
    final List<Stream> streams = new CopyOnWriteArrayList<>();

    @Override
    public StreamListener requestChannel(
        Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
      opened.incrementAndGet();
      streams.add(stream);
      stream.request(Integer.MAX_VALUE);
      if (stream.isReady()) {
        stream.next(null, data.retainedSlice());
      }
      return new StreamListener() {
        @Override
        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
          if (s.isReady()) {
            s.next(null, d.retainedSlice());
          }
        }

        @Override
        public void onCancel(Stream s) {
          cancelled.incrementAndGet();
        }
      };
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      stream.next(null, data.retainedSlice());
      return null;
    }
  }

  // ---------------------------------------------------------------- channel cancel

  @Test
  void rsocketJavaCancelsFiveThousandChannels_millraceEndsEachWholly_laterRequestsServed()
      throws Exception {
    CountingChannels responder = new CountingChannels();
    MillraceServer server = millraceServer(ConnectionConfig.DEFAULT, responder);
    RSocket rsocket = rsocketJavaClient(server.port());
    int channels = 5000; // beyond the 4,096 concurrent streams a half-ended channel would pin
    for (int i = 0; i < channels; i++) {
      Sinks.Many<Payload> outbound = Sinks.many().unicast().onBackpressureBuffer();
      CountDownLatch first = new CountDownLatch(1);
      Disposable subscription =
          rsocket
              .requestChannel(outbound.asFlux())
              .subscribe(
                  p -> {
                    p.release();
                    first.countDown();
                  });
      outbound.tryEmitNext(payload("c" + i, null)).orThrow();
      assertThat(first.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();
      subscription.dispose(); // the requester cancels: CANCEL on the wire
    }
    await("every channel cancelled", () -> responder.cancelled.get() == channels);
    await(
        "no stream left open",
        () -> responder.streams.stream().allMatch(s -> s.isInboundDone() && s.isOutboundDone()));
    Connection connection = responder.streams.get(0).connection();
    await("the server's stream count back to 0", () -> connection.activeStreams() == 0);
    assertThat(Interop.receive(rsocket.requestResponse(payload("after", null)).block(TIMEOUT)))
        .isEqualTo(Received.of("after"));
  }

  @Test
  void millraceCancelsChannel_rsocketJavaResponderSeesBothHalvesEnd() throws Exception {
    CountDownLatch outboundCancelled = new CountDownLatch(1);
    CompletableFuture<String> inboundEnd = new CompletableFuture<>();
    CloseableChannel channel =
        rsocketJavaServer(
            RSocketServer.create(
                (setup, socket) ->
                    Mono.just(
                        new RSocket() {
                          @Override
                          public Flux<Payload> requestChannel(
                              org.reactivestreams.Publisher<Payload> payloads) {
                            Flux.from(payloads)
                                .subscribe(
                                    Payload::release,
                                    e ->
                                        inboundEnd.complete(
                                            "error " + e.getClass().getSimpleName()),
                                    () -> inboundEnd.complete("complete"));
                            // Without the drop, a tick that finds no demand fails the interval
                            // (its overflow error) when the CANCEL is slower than the credit.
                            return Flux.interval(Duration.ofMillis(10))
                                .onBackpressureDrop()
                                .map(i -> payload("r" + i, null))
                                .doOnCancel(outboundCancelled::countDown);
                          }
                        })));
    Connection connection = millraceClient(channel.address().getPort());
    MillraceRecorder recorder = new MillraceRecorder(2);
    connection.requestChannel(null, buf("first"), Integer.MAX_VALUE, false, recorder);

    assertThat(outboundCancelled.await(TIMEOUT.toMillis(), MILLISECONDS))
        .as("rsocket-java stops sending")
        .isTrue();
    assertThat(inboundEnd.get(TIMEOUT.toMillis(), MILLISECONDS))
        .as("and its inbound half ends too (rsocket-java errors it with a CancellationException)")
        .startsWith("error");
    await("Millrace's stream released", () -> connection.activeStreams() == 0);
  }

  @Test
  void rsocketJavaResponderCancelsInbound_millraceRequesterStopsSendingButReceivesTheRest()
      throws Exception {
    CloseableChannel channel =
        rsocketJavaServer(
            RSocketServer.create(
                (setup, socket) ->
                    Mono.just(
                        new RSocket() {
                          @Override
                          public Flux<Payload> requestChannel(
                              org.reactivestreams.Publisher<Payload> payloads) {
                            // Reads one payload, cancels its inbound, then sends three more.
                            return Flux.from(payloads)
                                .take(1)
                                .map(Interop::receive)
                                .thenMany(Flux.range(0, 3).map(i -> payload("after" + i, null)));
                          }
                        })));
    Connection connection = millraceClient(channel.address().getPort());
    CountDownLatch cancelled = new CountDownLatch(1);
    MillraceRecorder recorder =
        new MillraceRecorder() {
          @Override
          public void onCancel(Stream stream) {
            cancelled.countDown();
          }
        };
    connection.requestChannel(null, buf("first"), Integer.MAX_VALUE, false, recorder);
    assertThat(cancelled.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();
    recorder.awaitComplete();
    assertThat(recorder.items)
        .containsExactly(Received.of("after0"), Received.of("after1"), Received.of("after2"));
    await("Millrace's stream released", () -> connection.activeStreams() == 0);
  }

  @Test
  void millraceResponderCancelsInbound_rsocketJavaStopsSendingAndStillReceives() throws Exception {
    CountDownLatch javaOutboundCancelled = new CountDownLatch(1);
    Responder cancelsAfterFirst =
        new Responder() {
          @Override
          public StreamListener requestChannel(
              Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
            stream.cancel(); // no more from the requester, please
            return new StreamListener() {
              int sent;

              @Override
              public void onReady(Stream s) {
                while (sent < 3 && s.isReady()) {
                  ByteBuf item = ByteBufUtil.writeAscii(s.connection().alloc(), "m" + sent++);
                  if (sent == 3) {
                    s.nextAndComplete(null, item);
                  } else {
                    s.next(null, item);
                  }
                }
              }
            };
          }
        };
    MillraceServer server = millraceServer(ConnectionConfig.DEFAULT, cancelsAfterFirst);
    RSocket rsocket = rsocketJavaClient(server.port());
    List<Received> items =
        rsocket
            .requestChannel(
                // rsocket-java sends the first tick with the request and the responder grants
                // no more: without the drop, the next tick fails the interval (its overflow
                // error) unless the CANCEL reached rsocket-java within 10 ms, which a loaded
                // machine missed once in CI.
                Flux.interval(Duration.ofMillis(10))
                    .onBackpressureDrop()
                    .map(i -> payload("j" + i, null))
                    .doOnCancel(javaOutboundCancelled::countDown))
            .map(Interop::receive)
            .collectList()
            .block(TIMEOUT);
    assertThat(items).containsExactly(Received.of("m0"), Received.of("m1"), Received.of("m2"));
    assertThat(javaOutboundCancelled.await(TIMEOUT.toMillis(), MILLISECONDS)).isTrue();
  }

  // ---------------------------------------------------------------- CONNECTION_CLOSE

  @Test
  void millraceClientCloses_rsocketJavaAnswersTheBarrier_closeCompletesGracefullyAtOnce()
      throws Exception {
    CompletableFuture<RSocket> serverSideSocket = new CompletableFuture<>();
    CloseableChannel channel =
        rsocketJavaServer(
            RSocketServer.create(
                (setup, socket) -> {
                  serverSideSocket.complete(socket);
                  return Mono.just(new RSocket() {});
                }));
    Connection connection = millraceClient(channel.address().getPort());
    RSocket toClient = serverSideSocket.get(TIMEOUT.toMillis(), MILLISECONDS);
    long start = System.nanoTime();
    connection.close();
    CloseReason reason = connection.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(reason.kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("not the 30 s drain timeout: rsocket-java answers the KEEPALIVE after the close")
        .isLessThan(Duration.ofSeconds(5));
    // rsocket-java fails its requester side with ConnectionCloseException and, once Millrace has
    // closed its side, closes the connection.
    assertThatThrownBy(() -> toClient.onClose().block(TIMEOUT))
        .isInstanceOf(ConnectionCloseException.class);
  }

  @Test
  void millraceServerShutsDown_rsocketJavaFailsItsOpenStreamsAtOnce_drainEndsAtTheDeadline()
      throws Exception {
    Responder holds =
        new Responder() {
          @Override
          public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
            return null; // never completes
          }

          @Override
          public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
            stream.next(null, data.retainedSlice());
            return null;
          }
        };
    MillraceServer server =
        millraceServer(
            ConnectionConfig.builder().drainTimeout(Duration.ofSeconds(2)).build(), holds);
    RSocket rsocket = rsocketJavaClient(server.port());
    JavaRecorder stream = JavaRecorder.requesting(5);
    rsocket.requestStream(payload("q", null)).subscribe(stream);
    assertThat(Interop.receive(rsocket.requestResponse(payload("ping", null)).block(TIMEOUT)))
        .isEqualTo(Received.of("ping"));

    long start = System.nanoTime();
    server.shutdown();
    // rsocket-java does not drain: CONNECTION_CLOSE fails its open requests at once.
    assertThat(stream.done)
        .failsWithin(TIMEOUT)
        .withThrowableThat()
        .havingRootCause()
        .isInstanceOf(ConnectionCloseException.class);
    assertThatThrownBy(() -> rsocket.requestResponse(payload("late", null)).block(TIMEOUT))
        .isInstanceOf(ConnectionCloseException.class);
    // Millrace's side of the abandoned stream stays open until the drain deadline forces it.
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(1900));
  }

  // ---------------------------------------------------------------- ERROR on stream 0

  @Test
  void rsocketJavaRejectsSetup_millraceClientClosesWithThatErrorAndMessage() throws Exception {
    CloseableChannel channel =
        rsocketJavaServer(
            RSocketServer.create(
                (setup, socket) -> Mono.error(new RejectedSetupException("go away"))));
    Connection connection = millraceClient(channel.address().getPort());
    MillraceRecorder request = new MillraceRecorder();
    connection.requestResponse(null, buf("hello"), request);
    MillraceRecorder.StreamError error = request.awaitError();
    assertThat(error.code).isEqualTo(ErrorCode.REJECTED_SETUP);
    CloseReason reason = connection.onClose().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(reason.kind()).isEqualTo(CloseReason.Kind.ERROR_FROM_PEER);
    assertThat(reason.errorCode()).isEqualTo(ErrorCode.REJECTED_SETUP);
    assertThat(reason.message()).isEqualTo("go away");
  }

  @Test
  void millraceRejectsSetup_rsocketJavaRequestsFailWithRejectedSetup() throws Exception {
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress(HOST, 0)
            .acceptor(
                (setup, connection) -> {
                  throw SetupException.rejected("no entry");
                })
            .bind();
    resources.add(server::shutdownNow);
    RSocket rsocket = rsocketJavaClient(server.port());
    assertThatThrownBy(() -> rsocket.requestResponse(payload("hello", null)).block(TIMEOUT))
        .isInstanceOf(RejectedSetupException.class)
        .hasMessage("no entry");
  }

  @Test
  void millraceSendsConnectionError_rsocketJavaFailsRequestsAndCloses() throws Exception {
    MillraceServer server =
        millraceServer(
            ConnectionConfig.builder().maxFrameLength(256).build(), new CountingChannels());
    RSocket rsocket = rsocketJavaClient(server.port());
    assertThatThrownBy(
            () -> rsocket.requestResponse(payload("x".repeat(1000), null)).block(TIMEOUT))
        .isInstanceOf(ConnectionErrorException.class)
        .hasMessageContaining("exceeds the limit of 256");
    assertThatThrownBy(() -> rsocket.onClose().block(TIMEOUT))
        .isInstanceOf(ConnectionErrorException.class);
  }
}
