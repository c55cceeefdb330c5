package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.RequestFnfFrame;
import io.millrace.frame.RequestStreamFrame;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Hostile and edge-case sequences found in review of the engine. */
class ReviewRegressionTest {
  private static final int F = FrameHeader.FLAG_FOLLOWS;
  private static final int N = FrameHeader.FLAG_NEXT;
  private static final int C = FrameHeader.FLAG_COMPLETE;

  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private static String text(int length) {
    return "x".repeat(length);
  }

  private static final Responder OPEN_STREAMS =
      new Responder() {
        @Override
        public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
          return null; // stays open, sends nothing
        }
      };

  private ScriptedTransport server(ConnectionConfig config, Responder responder) {
    ScriptedTransport t = ScriptedTransport.server(loop, config, (s, c) -> responder);
    t.inject(Frames.setup());
    return t;
  }

  @Test
  void fragmentsOnAHalfThatReceivesNothing_ignoredNotBuffered() {
    ScriptedTransport t =
        server(
            ConnectionConfig.builder().maxReassemblyBytesPerConnection(1000).build(), OPEN_STREAMS);
    t.inject(Frames.requestStream(1, 1, "q"));
    for (int i = 0; i < 20; i++) {
      t.inject(Frames.payload(1, F | N, null, text(500)));
    }
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
  }

  @Test
  void fragmentedMessagesOnManyStreams_connectionWideLimit_connectionError() {
    ScriptedTransport t =
        server(
            ConnectionConfig.builder()
                .maxReassembledLength(1000)
                .maxReassemblyBytesPerConnection(1500)
                .build(),
            Responder.REJECT_ALL);
    ByteBuf d = Frames.utf8(text(800));
    t.inject(RequestFnfFrame.encode(Frames.ALLOC, 0, 1, true, null, d));
    assertThat(t.closed).isFalse();
    t.inject(RequestFnfFrame.encode(Frames.ALLOC, 0, 3, true, null, d));
    d.release();
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(frames.get(0).message).contains("1500");
    assertThat(t.closed).isTrue();
  }

  @Test
  void firstFragmentWithoutNext_connectionError() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, new RecordingListener()));
    t.take();
    t.inject(Frames.payload(1, F, null, "no next"));
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
  }

  @Test
  void payloadWithFollowsAndComplete_followsIgnored_streamCompletes() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, listener));
    t.inject(Frames.payload(1, F | N | C, null, "last"));
    assertThat(listener.events).containsExactly("next last", "complete");
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  @Test
  void fragmentWithMetadataAfterData_connectionError() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, new RecordingListener()));
    t.take();
    t.inject(Frames.payload(1, F | N, null, "data first"));
    t.inject(Frames.payload(1, N, "metadata later", "x"));
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
  }

  @Test
  void requestNWhileRequestIsReassembled_addsToInitialCredit() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t =
        server(
            ConnectionConfig.DEFAULT,
            new Responder() {
              @Override
              public StreamListener requestStream(Stream s, ByteBuf m, ByteBuf d) {
                stream.set(s);
                return null;
              }
            });
    ByteBuf part = Frames.utf8("par");
    t.inject(RequestStreamFrame.encode(Frames.ALLOC, 0, 1, true, 2, null, part));
    part.release();
    t.inject(Frames.requestN(1, 3));
    t.inject(Frames.next(1, "t"));
    assertThat(loop.call(() -> stream.get().credit())).isEqualTo(5);
  }

  @Test
  void listenerThrowsOnCompletingPayload_streamStillRemoved() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(
        () ->
            t.engine.requestResponse(
                null,
                Frames.utf8("q"),
                new StreamListener() {
                  @Override
                  public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
                    throw new IllegalStateException("listener bug");
                  }
                }));
    t.inject(Frames.payload(1, N | C, null, "answer"));
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    assertThat(t.closed).isFalse();
  }

  @Test
  void listenerThrowsOnCompletingPayload_peerStreamSlotFreed() {
    ScriptedTransport t =
        server(
            ConnectionConfig.builder().maxConcurrentStreams(1).build(),
            new Responder() {
              @Override
              public StreamListener requestChannel(
                  Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
                stream.complete();
                stream.request(1);
                return new StreamListener() {
                  @Override
                  public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
                    throw new IllegalStateException("listener bug");
                  }
                };
              }
            });
    t.inject(Frames.requestChannel(1, 1, "first", false));
    t.inject(Frames.payload(1, N | C, null, "last"));
    t.take();
    t.inject(Frames.requestChannel(3, 1, "next channel", false));
    assertThat(t.take()).extracting(f -> f.type).doesNotContain(FrameType.ERROR);
  }

  @Test
  void setupAsksForHugeMaxLifetime_serverEnforcesItsOwn() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder()
                .keepAlive(Duration.ofSeconds(1), Duration.ofMillis(300))
                .build(),
            (s, c) -> Responder.REJECT_ALL);
    t.inject(
        io.millrace.frame.SetupFrame.encode(
            Frames.ALLOC, 0, false, 1, Integer.MAX_VALUE, null, "a", "b", null, null));
    t.advance(Duration.ofMillis(301));
    assertThat(t.closed).as("closed after the server's 300 ms, not the peer's 24 days").isTrue();
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
  }

  @Test
  void errorMessage_longerThanLimit_truncated() {
    ScriptedTransport t =
        server(
            ConnectionConfig.DEFAULT,
            new Responder() {
              @Override
              public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                stream.error(ErrorCode.APPLICATION_ERROR, "é".repeat(1_000_000));
                return null;
              }
            });
    t.inject(Frames.requestResponse(1, null, "q"));
    List<WireFrame> frames = t.take();
    assertThat(frames.get(0).message).hasSize(FrameWriter.MAX_ERROR_MESSAGE_CHARS).endsWith("...");
  }
}
