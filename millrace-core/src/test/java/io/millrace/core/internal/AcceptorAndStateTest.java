package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.AsyncAcceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.SetupException;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What flavours and balancers build on: asynchronous acceptance, requests from inside the acceptor,
 * stream state, connection events and availability.
 */
class AcceptorAndStateTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private static final Responder ECHO =
      new Responder() {
        @Override
        public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
          stream.next(null, d.retainedSlice());
          return null;
        }
      };

  private ScriptedTransport asyncServer(AsyncAcceptor acceptor) {
    ScriptedTransport t = new ScriptedTransport(loop);
    t.engine = ConnectionEngine.server(t, ConnectionConfig.DEFAULT, null, acceptor, null, t.timers);
    loop.run(() -> t.engine.start(null, null));
    return t;
  }

  @Test
  void asyncAcceptor_readingWaitsForTheDecision_thenRequestsThatCameWithSetupAreServed()
      throws InterruptedException {
    CompletableFuture<Responder> decision = new CompletableFuture<>();
    AtomicReference<String> token = new AtomicReference<>();
    ScriptedTransport t =
        asyncServer(
            (setup, connection) -> {
              token.set(setup.data().toString(StandardCharsets.UTF_8)); // copied: borrowed
              return decision;
            });
    ByteBuf setupData = Frames.utf8("secret-token");
    ByteBuf setup =
        io.millrace.frame.SetupFrame.encode(
            Frames.ALLOC, 0, false, 30_000, 90_000, null, "a", "b", null, setupData);
    setupData.release();
    t.inject(setup, Frames.requestResponse(1, null, "early"), Frames.requestResponse(3, null, "x"));
    assertThat(token.get()).isEqualTo("secret-token");
    assertThat(t.take()).as("nothing answered before the decision").isEmpty();
    assertThat(t.held).as("requests wait in the transport").hasSize(2);

    Thread decider = new Thread(() -> decision.complete(ECHO)); // decided on another thread
    decider.start();
    decider.join(10_000); // (it hands the decision to the loop, drained below)
    loop.drain();
    for (int i = 0; i < 100 && !t.held.isEmpty(); i++) {
      loop.drain();
    }
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data).containsExactly("early", "x");
    assertThat(t.reading).isTrue();
  }

  @Test
  void asyncAcceptor_rejectsWithSetupException_clientGetsThatCode() {
    ScriptedTransport t =
        asyncServer(
            (setup, connection) ->
                CompletableFuture.failedFuture(
                    new SetupException(ErrorCode.REJECTED_SETUP, "bad token")));
    t.inject(Frames.setup());
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.REJECTED_SETUP);
    assertThat(frames.get(0).message).isEqualTo("bad token");
    assertThat(t.closed).isTrue();
  }

  @Test
  void asyncAcceptor_neverDecides_setupTimeoutClosesTheConnection() {
    ScriptedTransport t = asyncServer((setup, connection) -> new CompletableFuture<>());
    t.inject(Frames.setup());
    t.advance(Duration.ofSeconds(6));
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.INVALID_SETUP);
    assertThat(t.closed).isTrue();
  }

  @Test
  void acceptor_startsARequestToTheClientBeforeReturning() {
    RecordingListener answer = new RecordingListener();
    Responder clientResponder = ECHO;
    try (LoopbackPair pair =
        new LoopbackPair(
            ConnectionConfig.DEFAULT,
            ConnectionConfig.DEFAULT,
            (setup, connection) -> {
              connection.requestResponse(null, Frames.utf8("who are you?"), answer);
              return ECHO;
            },
            clientResponder)) {
      pair.loop.drain();
      assertThat(answer.events).containsExactly("next who are you?", "complete");
    }
  }

  @Test
  void streamState_readableFromAnyThread() throws Exception {
    Responder keepsChannelsOpen =
        new Responder() {
          @Override
          public StreamListener requestChannel(Stream s, ByteBuf m, ByteBuf d, boolean c) {
            return null;
          }
        };
    try (LoopbackPair pair =
        new LoopbackPair(ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, keepsChannelsOpen)) {
      AtomicReference<Stream> stream = new AtomicReference<>();
      pair.loop.run(
          () ->
              stream.set(
                  pair.client.engine.requestChannel(null, Frames.utf8("x"), 1, false, null)));
      pair.loop.drain();
      assertThat(stream.get().isCancelled()).isFalse();
      assertThat(stream.get().isOutboundDone()).isFalse();
      pair.loop.run(() -> stream.get().cancel());
      // Read on this thread, not the loop.
      assertThat(stream.get().isCancelled()).isTrue();
      assertThat(stream.get().isInboundDone()).isTrue();
      assertThat(stream.get().isOutboundDone()).isTrue();
      assertThat(pair.client.engine.activeStreams()).isZero();
      assertThat(pair.client.engine.remoteAddress().toString()).contains("server");
      assertThat(pair.client.engine.localAddress().toString()).contains("client");
    }
  }

  @Test
  void leases_listenerHearsGrantAndExpiry_availabilityFollows() {
    List<String> events = new ArrayList<>();
    ScriptedTransport t =
        ScriptedTransport.client(loop, ConnectionConfig.builder().lease(true).build(), null);
    loop.run(
        () ->
            t.engine.addListener(
                new ConnectionListener() {
                  @Override
                  public void onLeaseGranted(Connection c, int ttl, int requests) {
                    events.add("granted " + ttl + " " + requests);
                  }

                  @Override
                  public void onLeaseExpired(Connection c) {
                    events.add("expired");
                  }
                }));
    assertThat(t.engine.availability()).as("no lease yet").isZero();
    t.inject(Frames.lease(1000, 4));
    assertThat(t.engine.availability()).isEqualTo(1.0);
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("q"), null));
    assertThat(t.engine.availability()).isEqualTo(0.75);
    t.advance(Duration.ofMillis(1001));
    assertThat(events).containsExactly("granted 1000 4", "expired");
    assertThat(t.engine.availability()).isZero();
    loop.run(() -> t.engine.dispose());
  }

  @Test
  void availability_withoutLeases_oneWhileOpen_zeroWhileDraining() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    assertThat(t.engine.availability()).isEqualTo(1.0);
    loop.run(() -> t.engine.close());
    assertThat(t.engine.isDraining()).isTrue();
    assertThat(t.engine.availability()).isZero();
  }

  @Test
  void writableAgain_listenerTold() {
    List<String> events = new ArrayList<>();
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.engine.addListener(
        new ConnectionListener() {
          @Override
          public void onWritable(Connection c) {
            events.add("writable");
          }
        });
    t.setWritable(false);
    t.setWritable(true);
    assertThat(events).containsExactly("writable");
  }

  @Test
  void serverWideReassemblyBudget_secondConnectionBreaksIt_onlyThatOneCloses() {
    ReassemblyBudget server = ReassemblyBudget.forServer(3000);
    ConnectionConfig config =
        ConnectionConfig.builder().maxReassemblyBytesPerConnection(2500).build();
    ScriptedTransport[] connections = new ScriptedTransport[2];
    for (int i = 0; i < 2; i++) {
      ScriptedTransport t = new ScriptedTransport(loop);
      t.engine = ConnectionEngine.server(t, config, (s, c) -> ECHO, null, server, t.timers);
      loop.run(() -> t.engine.start(null, null));
      t.inject(Frames.setup());
      connections[i] = t;
    }
    ByteBuf d = Frames.utf8("x".repeat(2000));
    connections[0].inject(
        io.millrace.frame.RequestFnfFrame.encode(Frames.ALLOC, 0, 1, true, null, d));
    assertThat(server.held()).isEqualTo(2000);
    connections[1].inject(
        io.millrace.frame.RequestFnfFrame.encode(Frames.ALLOC, 0, 1, true, null, d));
    d.release();
    assertThat(connections[0].closed).isFalse();
    assertThat(connections[1].take())
        .extracting(f -> f.type, f -> f.errorCode)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(FrameType.ERROR, ErrorCode.CONNECTION_ERROR));
    assertThat(connections[1].closed).isTrue();
    assertThat(server.held()).as("the closed connection gave its bytes back").isEqualTo(2000);
    loop.run(() -> connections[0].engine.dispose());
    loop.drain();
    assertThat(server.held()).isZero();
  }

  @Test
  void tinyFragments_chargedByTheOneBufferTheyAreCopiedInto() {
    List<String> got = new ArrayList<>();
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public void fireAndForget(Connection connection, ByteBuf m, ByteBuf d) {
                    got.add(d.toString(StandardCharsets.UTF_8));
                  }
                });
    t.inject(Frames.setup());
    ByteBuf first = Frames.utf8("a");
    t.inject(io.millrace.frame.RequestFnfFrame.encode(Frames.ALLOC, 0, 1, true, null, first));
    first.release();
    for (int i = 0; i < 999; i++) {
      t.inject(
          Frames.payload(
              1,
              io.millrace.frame.FrameHeader.FLAG_FOLLOWS | io.millrace.frame.FrameHeader.FLAG_NEXT,
              null,
              "b"));
    }
    long held = loop.call(() -> t.engine.streams.get(1).reassembly.held());
    assertThat(held).as("one buffer of about 1000 bytes, not 1000 buffers").isBetween(999L, 2048L);
    t.inject(Frames.payload(1, io.millrace.frame.FrameHeader.FLAG_NEXT, null, "c"));
    assertThat(got).containsExactly("a" + "b".repeat(999) + "c");
  }
}
