package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Graceful close and its bounds: draining, the peer's end of stream, the drain timeout, reasons.
 */
class GracefulCloseTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private final List<Stream> open = new ArrayList<>();
  private final AtomicInteger fireAndForgets = new AtomicInteger();

  private ScriptedTransport server(ConnectionConfig config) {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            config,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    open.add(stream);
                    return null;
                  }

                  @Override
                  public void fireAndForget(Connection connection, ByteBuf m, ByteBuf d) {
                    fireAndForgets.incrementAndGet();
                  }
                });
    t.inject(Frames.setup());
    return t;
  }

  private static CloseReason reason(ScriptedTransport t) {
    return t.engine.onClose().toCompletableFuture().getNow(null);
  }

  @Test
  void close_sendsConnectionCloseAndBarrier_finishesOpenStream_rejectsNewRequests() {
    ScriptedTransport t = server(ConnectionConfig.DEFAULT);
    t.inject(Frames.requestStream(1, 10, "q"));
    loop.run(() -> t.engine.close());
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type, f -> f.streamId, f -> f.errorCode, f -> f.data)
        .containsExactly(
            tuple(FrameType.ERROR, 0, ErrorCode.CONNECTION_CLOSE, null),
            tuple(FrameType.KEEPALIVE, 0, 0, "millrace-drain"));
    assertThat(frames.get(1).has(0x80)).as("asks for an answer").isTrue();
    assertThat(loop.call(() -> t.engine.isDraining())).isTrue();

    // Requests that cross the CONNECTION_CLOSE are answered, not dropped; fire-and-forget is taken.
    t.inject(Frames.requestStream(3, 1, "too late"), Frames.fnf(5, "late fnf"));
    frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.REJECTED);
    assertThat(frames.get(0).streamId).isEqualTo(3);
    assertThat(fireAndForgets).hasValue(1);

    t.inject(Frames.keepAlive(false, "millrace-drain")); // the peer has seen the close
    assertThat(t.closed).as("the open stream still runs").isFalse();
    loop.run(
        () -> {
          open.get(0).next(null, Frames.utf8("still flowing"));
          open.get(0).complete();
        });
    assertThat(t.take())
        .extracting(f -> f.type)
        .containsExactly(FrameType.PAYLOAD, FrameType.PAYLOAD);
    assertThat(t.closed).isTrue();
    assertThat(t.closedGracefully).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
    assertThat(reason(t).isGraceful()).isTrue();
  }

  @Test
  void close_streamsDone_waitsForBarrierAnswerNotAnyKeepAliveAnswer() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(() -> t.engine.close());
    t.inject(Frames.keepAlive(false, "")); // the answer to an earlier ping: not the barrier
    assertThat(t.closed).isFalse();
    t.inject(Frames.keepAlive(false, "millrace-drain"));
    assertThat(t.closed).isTrue();
  }

  @Test
  void close_peerClosesItsSide_closesWithoutBarrierAnswer() {
    ScriptedTransport t = server(ConnectionConfig.DEFAULT);
    loop.run(() -> t.engine.close());
    assertThat(t.closed).isFalse();
    t.peerClosesInput();
    assertThat(t.closed).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
  }

  @Test
  void peerConnectionClose_localRequestsRefused_openStreamsDrainThenClose() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener open = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, open));
    t.inject(Frames.error(0, ErrorCode.CONNECTION_CLOSE, "server going away"));
    RecordingListener refused = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("new"), refused));
    assertThat(refused.events).hasSize(1);
    assertThat(refused.events.get(0)).startsWith("error 0x202");
    assertThat(t.closed).isFalse();

    t.inject(Frames.next(1, "a"), Frames.complete(1));
    assertThat(open.events).containsExactly("next a", "complete");
    loop.drain();
    // The side that was asked closes as soon as its streams are done.
    assertThat(t.closed).isTrue();
    assertThat(t.closedGracefully).isTrue();
    assertThat(t.take()).extracting(f -> f.type).containsExactly(FrameType.REQUEST_STREAM);
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_PEER);
    assertThat(reason(t).message()).isEqualTo("server going away");
  }

  @Test
  void close_peerNeverCloses_forcedAtTheDrainTimeout() {
    ScriptedTransport t =
        server(ConnectionConfig.builder().drainTimeout(Duration.ofSeconds(3)).build());
    t.inject(Frames.requestStream(1, 10, "q"));
    loop.run(() -> t.engine.close());
    t.advance(Duration.ofMillis(2900));
    assertThat(t.closed).isFalse();
    t.advance(Duration.ofMillis(200));
    assertThat(t.closed).isTrue();
    assertThat(t.closedGracefully).isFalse();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.DRAIN_TIMEOUT);
    assertThat(open.get(0).isOutboundDone()).isTrue();
  }

  @Test
  void draining_peerClosesItsSideWithStreamsOpen_streamsFailAndCloseCompletes() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("never answered"), listener));
    loop.run(() -> t.engine.close());
    t.peerClosesInput();
    assertThat(t.closed).isTrue();
    assertThat(listener.events).containsExactly("error 0x102: the peer closed the connection");
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
  }

  @Test
  void secondClose_escalatesToDispose() {
    ScriptedTransport t = server(ConnectionConfig.DEFAULT);
    t.inject(Frames.requestStream(1, 10, "q"));
    loop.run(() -> t.engine.close());
    assertThat(t.closed).isFalse();
    loop.run(() -> t.engine.close());
    loop.drain();
    assertThat(t.closed).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.DISPOSED);
  }

  @Test
  void bothSidesClose_neitherWaitsForTheOther() {
    try (LoopbackPair pair =
        new LoopbackPair(
            ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, Responder.REJECT_ALL)) {
      pair.loop.run(
          () -> {
            pair.client.engine.close();
            pair.server.engine.close();
          });
      pair.loop.drain();
      assertThat(pair.client.closed).isTrue();
      assertThat(pair.server.closed).isTrue();
    }
  }

  @Test
  void clientClose_loopback_serverFollows_bothClosedGracefully() {
    List<String> events = new ArrayList<>();
    try (LoopbackPair pair =
        new LoopbackPair(
            ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, Responder.REJECT_ALL)) {
      pair.loop.run(
          () ->
              pair.server.engine.addListener(
                  new ConnectionListener() {
                    @Override
                    public void onDraining(Connection c, CloseReason reason) {
                      events.add("draining " + reason.kind());
                    }

                    @Override
                    public void onClosed(Connection c, CloseReason reason) {
                      events.add("closed " + reason.kind());
                    }
                  }));
      pair.loop.run(() -> pair.client.engine.close());
      pair.loop.drain();
      assertThat(pair.client.closed).isTrue();
      assertThat(events).containsExactly("draining CLOSED_BY_PEER", "closed CLOSED_BY_PEER");
      assertThat(pair.client.engine.onClose().toCompletableFuture().getNow(null).kind())
          .isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
      assertThat(pair.loop.call(() -> pair.client.engine.availability())).isZero();
    }
  }

  @Test
  void peerEndsTransportWithoutGoodbye_reasonTransportClosed_streamsFail() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, listener));
    t.peerClosesInput();
    assertThat(t.closed).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.TRANSPORT_CLOSED);
    assertThat(listener.events).hasSize(1);
    assertThat(listener.events.get(0)).startsWith("error 0x101");
  }

  @Test
  void errorFromPeerOnStreamZero_reasonCarriesCodeAndMessage() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.inject(Frames.keepAlive(false, ""));
    t.inject(Frames.error(0, ErrorCode.CONNECTION_ERROR, "you broke it"));
    loop.drain();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.ERROR_FROM_PEER);
    assertThat(reason(t).errorCode()).isEqualTo(ErrorCode.CONNECTION_ERROR);
    assertThat(reason(t).message()).isEqualTo("you broke it");
  }

  @Test
  void protocolViolation_reasonErrorSent_errorReachesTransportBeforeClose() {
    ScriptedTransport t = server(ConnectionConfig.DEFAULT);
    t.inject(Frames.requestStream(2, 1, "wrong parity"));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closedGracefully).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.ERROR_SENT);
  }

  @Test
  void dispose_reasonDisposed_streamsFailWithCanceled() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, listener));
    loop.run(() -> t.engine.dispose());
    loop.drain();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.DISPOSED);
    assertThat(listener.events).containsExactly("error 0x203: connection disposed");
  }

  @Test
  void closeBeforeSetup_rejectsTheSetupInFlightAndCloses() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> null);
    AtomicReference<CloseReason> seen = new AtomicReference<>();
    t.engine.onClose().thenAccept(seen::set);
    loop.run(() -> t.engine.close());
    loop.drain();
    assertThat(t.closed).isTrue();
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.REJECTED_SETUP);
    assertThat(seen.get().kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
  }

  @Test
  void shutdownAfterTheApplicationsOwnClose_keepsDraining_doesNotDispose() {
    ScriptedTransport t = server(ConnectionConfig.DEFAULT);
    t.inject(Frames.requestStream(1, 10, "q"));
    loop.run(() -> t.engine.close());
    loop.run(() -> t.engine.closeForShutdown());
    loop.drain();
    assertThat(t.closed).isFalse();
    assertThat(loop.call(() -> t.engine.isDraining())).isTrue();
  }

  @Test
  void acceptorClosesTheConnectionItself_staysClosed() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) -> {
              c.dispose();
              return Responder.REJECT_ALL;
            });
    t.inject(Frames.setup());
    loop.drain();
    assertThat(t.engine.isOpen()).isFalse();
    assertThat(t.closed).isTrue();
    assertThat(reason(t).kind()).isEqualTo(CloseReason.Kind.DISPOSED);
  }

  @Test
  void channelResponderCancelsInbound_halfReassembledMessageReleasedAtOnce() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestChannel(
                      Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
                    open.add(stream);
                    stream.request(5);
                    return null;
                  }
                });
    t.inject(Frames.setup(), Frames.requestChannel(1, 5, "first", false));
    t.inject(
        Frames.payload(
            1,
            io.millrace.frame.FrameHeader.FLAG_FOLLOWS | io.millrace.frame.FrameHeader.FLAG_NEXT,
            null,
            "x".repeat(500)));
    assertThat(loop.call(() -> t.engine.reassemblyBudget.held())).isPositive();
    loop.run(() -> open.get(0).cancel());
    assertThat(loop.call(() -> t.engine.reassemblyBudget.held())).isZero();
    t.inject(Frames.payload(1, io.millrace.frame.FrameHeader.FLAG_NEXT, null, "end"));
    assertThat(loop.call(() -> t.engine.reassemblyBudget.held())).isZero();
    assertThat(t.closed).isFalse();
  }
}
