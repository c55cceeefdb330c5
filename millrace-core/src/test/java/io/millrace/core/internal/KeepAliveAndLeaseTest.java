package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.LeaseIssuer;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class KeepAliveAndLeaseTest {
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

  @Test
  void keepAliveWithRespond_answeredWithSameDataAndRespondCleared() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> ECHO);
    t.inject(Frames.setup(), Frames.keepAlive(true, "ping-data"));
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).type).isEqualTo(FrameType.KEEPALIVE);
    assertThat(frames.get(0).has(FrameHeader.FLAG_RESPOND)).isFalse();
    assertThat(frames.get(0).data).isEqualTo("ping-data");
  }

  @Test
  void keepAliveWithoutRespond_notAnswered() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> ECHO);
    t.inject(Frames.setup(), Frames.keepAlive(false, "pong"));
    assertThat(t.take()).isEmpty();
  }

  @Test
  void keepAliveFlood_connectionErrorAfterRateLimit() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().maxInboundKeepAlivesPerSecond(5).build(),
            (s, c) -> ECHO);
    t.inject(Frames.setup());
    ByteBuf[] flood = new ByteBuf[20];
    for (int i = 0; i < flood.length; i++) {
      flood[i] = Frames.keepAlive(true, "x");
    }
    t.inject(flood);
    List<WireFrame> frames = t.take();
    assertThat(frames.subList(0, 5)).extracting(f -> f.type).containsOnly(FrameType.KEEPALIVE);
    assertThat(frames.get(5).errorCode).isEqualTo(ErrorCode.CONNECTION_ERROR);
    assertThat(frames).hasSize(6);
    assertThat(t.closed).isTrue();
  }

  @Test
  void keepAliveRepliesToOwnPings_notCountedAgainstTheRateLimit() {
    ScriptedTransport t =
        ScriptedTransport.client(
            loop, ConnectionConfig.builder().maxInboundKeepAlivesPerSecond(5).build(), null);
    t.take();
    ByteBuf[] replies = new ByteBuf[100];
    for (int i = 0; i < replies.length; i++) {
      replies[i] = Frames.keepAlive(false, "");
    }
    t.inject(replies);
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
  }

  @Test
  void setupWithKeepAliveIntervalAtServersMaxLifetime_refusedUpFront() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder()
                .keepAlive(Duration.ofSeconds(20), Duration.ofSeconds(90))
                .build(),
            (s, c) -> ECHO);
    t.inject(
        io.millrace.frame.SetupFrame.encode(
            Frames.ALLOC, 0, false, 90_000, 600_000, null, "a", "b", null, null));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.UNSUPPORTED_SETUP);
    assertThat(frames.get(0).message).contains("90000 ms");
    assertThat(t.closed).isTrue();
  }

  @Test
  void setupWithKeepAliveIntervalAtItsOwnMaxLifetime_refusedUpFront() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> ECHO);
    t.inject(
        io.millrace.frame.SetupFrame.encode(
            Frames.ALLOC, 0, false, 30_000, 30_000, null, "a", "b", null, null));
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.UNSUPPORTED_SETUP);
  }

  @Test
  void metadataPushFlood_connectionErrorAfterRateLimit() {
    int[] pushes = new int[1];
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().maxInboundMetadataPushesPerSecond(10).build(),
            (s, c) ->
                new Responder() {
                  @Override
                  public void metadataPush(Connection connection, ByteBuf metadata) {
                    pushes[0]++;
                  }
                });
    t.inject(Frames.setup());
    ByteBuf[] flood = new ByteBuf[50];
    for (int i = 0; i < flood.length; i++) {
      ByteBuf m = Frames.utf8("m");
      flood[i] = io.millrace.frame.MetadataPushFrame.encode(Frames.ALLOC, 0, m);
      m.release();
    }
    t.inject(flood);
    assertThat(pushes[0]).isEqualTo(10);
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void client_sendsKeepAliveEveryInterval() {
    ScriptedTransport t =
        ScriptedTransport.client(
            loop,
            ConnectionConfig.builder()
                .keepAlive(Duration.ofMillis(50), Duration.ofSeconds(10))
                .build(),
            null);
    t.take();
    for (int i = 0; i < 6; i++) {
      t.advance(Duration.ofMillis(50));
      t.inject(Frames.keepAlive(false, "")); // the server answers
    }
    long keepAlives =
        t.take().stream().filter(f -> f.type == FrameType.KEEPALIVE && f.has(0x80)).count();
    assertThat(keepAlives).isEqualTo(6);
    assertThat(t.closed).isFalse();
  }

  @Test
  void client_peerSilentBeyondMaxLifetime_connectionClosed() {
    ScriptedTransport t =
        ScriptedTransport.client(
            loop,
            ConnectionConfig.builder()
                .keepAlive(Duration.ofMillis(20), Duration.ofMillis(100))
                .build(),
            null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 1, listener));
    t.advance(Duration.ofMillis(100));
    assertThat(t.closed).isFalse();
    t.advance(Duration.ofMillis(20));
    assertThat(t.closed).isTrue();
    assertThat(listener.events).hasSize(1);
    assertThat(listener.events.get(0)).startsWith("error 0x101: no frame from the peer");
    assertThat(t.engine.onClose().toCompletableFuture().getNow(null).kind())
        .isEqualTo(CloseReason.Kind.KEEPALIVE_TIMEOUT);
  }

  @Test
  void client_peerAnswering_neverTimesOut() {
    ScriptedTransport t =
        ScriptedTransport.client(
            loop,
            ConnectionConfig.builder()
                .keepAlive(Duration.ofMillis(20), Duration.ofMillis(100))
                .build(),
            null);
    for (int i = 0; i < 50; i++) {
      t.advance(Duration.ofMillis(60));
      t.inject(Frames.keepAlive(false, ""));
    }
    assertThat(t.closed).isFalse();
  }

  @Test
  void server_clientSilentBeyondMaxLifetime_connectionClosed() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> ECHO);
    ByteBuf setup =
        io.millrace.frame.SetupFrame.encode(
            Frames.ALLOC, 0, false, 20, 100, null, "a", "b", null, null);
    t.inject(setup);
    t.advance(Duration.ofMillis(90));
    t.inject(Frames.keepAlive(true, "")); // keeps it alive for another 100 ms
    t.advance(Duration.ofMillis(90));
    assertThat(t.closed).isFalse();
    t.advance(Duration.ofMillis(20));
    assertThat(t.closed).isTrue();
    assertThat(t.take())
        .extracting(f -> f.errorCode)
        .containsExactly(0, ErrorCode.CONNECTION_ERROR); // the keepalive answer, then the error
  }

  @Test
  void server_idleConnection_timerRunsOnlyWhenSomethingIsDue() {
    ScriptedTransport t = ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> ECHO);
    t.inject(Frames.setup()); // keepalive 60 s, max lifetime 90 s (the server's)
    assertThat(loop.call(() -> t.timers.scheduledCount())).isEqualTo(1);
    for (int i = 0; i < 100; i++) {
      t.advance(Duration.ofSeconds(60));
      t.inject(Frames.keepAlive(true, ""));
    }
    assertThat(t.closed).isFalse();
  }

  @Test
  void leaseClient_requestBeforeLease_failsLocallyWithRejected() {
    ScriptedTransport t =
        ScriptedTransport.client(loop, ConnectionConfig.builder().lease(true).build(), null);
    List<WireFrame> setup = t.take();
    assertThat(setup.get(0).has(FrameHeader.FLAG_LEASE)).isTrue();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("q"), listener));
    assertThat(listener.events).hasSize(1);
    assertThat(listener.events.get(0)).startsWith("error 0x202");
    assertThat(t.take()).isEmpty();
  }

  @Test
  void leaseClient_respectsCountAndTtl() {
    ScriptedTransport t =
        ScriptedTransport.client(loop, ConnectionConfig.builder().lease(true).build(), null);
    t.take();
    t.inject(Frames.lease(60_000, 2));
    RecordingListener[] listeners = {
      new RecordingListener(), new RecordingListener(), new RecordingListener()
    };
    loop.run(
        () -> {
          for (RecordingListener l : listeners) {
            t.engine.requestResponse(null, Frames.utf8("q"), l);
          }
        });
    assertThat(t.take()).hasSize(2);
    assertThat(listeners[0].events).isEmpty();
    assertThat(listeners[1].events).isEmpty();
    assertThat(listeners[2].events.get(0)).startsWith("error 0x202");

    t.inject(Frames.lease(30, 5));
    t.advance(Duration.ofMillis(31));
    RecordingListener expired = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("q"), expired));
    assertThat(expired.events.get(0)).startsWith("error 0x202");
  }

  @Test
  void leaseServer_requestsBeyondGrant_rejected() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().leaseIssuer(LeaseIssuer.fixed(60_000, 2)).build(),
            (s, c) -> ECHO);
    t.inject(Frames.setup(true));
    List<WireFrame> lease = t.take();
    assertThat(lease).hasSize(1);
    assertThat(lease.get(0).type).isEqualTo(FrameType.LEASE);
    assertThat(lease.get(0).n).isEqualTo(2);
    assertThat(lease.get(0).ttl).isEqualTo(60_000);
    t.inject(
        Frames.requestResponse(1, null, "a"),
        Frames.requestResponse(3, null, "b"),
        Frames.requestResponse(5, null, "c"));
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type)
        .containsExactly(FrameType.PAYLOAD, FrameType.PAYLOAD, FrameType.ERROR);
    assertThat(frames.get(2).streamId).isEqualTo(5);
    assertThat(frames.get(2).errorCode).isEqualTo(ErrorCode.REJECTED);
    assertThat(t.closed).isFalse();
  }

  @Test
  void leaseBothWays_loopback_requestsFlowWithinLease() {
    ConnectionConfig client =
        ConnectionConfig.builder().lease(true).leaseIssuer(LeaseIssuer.fixed(60_000, 1)).build();
    ConnectionConfig server =
        ConnectionConfig.builder().leaseIssuer(LeaseIssuer.fixed(60_000, 3)).build();
    try (LoopbackPair pair = new LoopbackPair(client, server, ECHO)) {
      RecordingListener[] listeners = new RecordingListener[4];
      pair.loop.run(
          () -> {
            for (int i = 0; i < listeners.length; i++) {
              listeners[i] = new RecordingListener();
              pair.client.engine.requestResponse(null, Frames.utf8("r" + i), listeners[i]);
            }
          });
      pair.loop.drain();
      for (int i = 0; i < 3; i++) {
        assertThat(listeners[i].events).containsExactly("next r" + i, "complete");
      }
      assertThat(listeners[3].events.get(0)).startsWith("error 0x202");
    }
  }
}
