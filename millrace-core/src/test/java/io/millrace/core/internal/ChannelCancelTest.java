package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Cancelling a request-channel from either side, as the spec and rsocket-java do it: the
 * requester's CANCEL ends the whole stream on both sides; the responder's CANCEL only stops the
 * requester's outbound half.
 */
class ChannelCancelTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private ScriptedTransport serverKeeping(AtomicReference<Stream> stream, RecordingListener l) {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestChannel(
                      Stream s, ByteBuf m, ByteBuf d, boolean complete) {
                    stream.set(s);
                    return l;
                  }
                });
    t.inject(Frames.setup());
    return t;
  }

  @Test
  void requesterCancelsChannel_wholeStreamEndsOnRequesterSide() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    AtomicReference<Stream> stream = new AtomicReference<>();
    loop.run(
        () -> stream.set(t.engine.requestChannel(null, Frames.utf8("first"), 5, false, listener)));
    t.inject(Frames.requestN(1, 10));
    loop.run(() -> stream.get().cancel());
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    loop.run(
        () -> {
          assertThat(stream.get().isReady()).isFalse();
          assertThat(stream.get().credit()).isZero();
          stream.get().next(null, Frames.utf8("after cancel")); // dropped, not sent
        });
    t.inject(Frames.next(1, "late"), Frames.requestN(1, 5));
    assertThat(t.take())
        .extracting(f -> f.type)
        .containsExactly(FrameType.REQUEST_CHANNEL, FrameType.CANCEL);
    assertThat(listener.events).containsExactly("ready");
  }

  @Test
  void responderReceivesCancelOnChannel_wholeStreamEndsAndListenerTold() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    RecordingListener listener = new RecordingListener();
    ScriptedTransport t = serverKeeping(stream, listener);
    t.inject(Frames.requestChannel(1, 5, "first", false));
    assertThat(loop.call(() -> t.engine.activeStreams())).isEqualTo(1);
    t.inject(Frames.cancel(1));
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    assertThat(listener.events).containsExactly("ready", "cancel");
    // Nothing of the requester's is delivered any more, and this side sends nothing.
    t.inject(Frames.next(1, "late"));
    loop.run(() -> stream.get().next(null, Frames.utf8("dropped")));
    assertThat(listener.events).containsExactly("ready", "cancel");
    assertThat(t.take()).isEmpty();
  }

  @Test
  void responderCancelsChannelInbound_requesterStopsSendingButStillReceives() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    RecordingListener responderListener = new RecordingListener();
    RecordingListener requesterListener = new RecordingListener();
    Responder responder =
        new Responder() {
          @Override
          public StreamListener requestChannel(Stream s, ByteBuf m, ByteBuf d, boolean complete) {
            stream.set(s);
            return responderListener;
          }
        };
    try (LoopbackPair pair =
        new LoopbackPair(ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, responder)) {
      AtomicReference<Stream> requester = new AtomicReference<>();
      pair.loop.run(
          () ->
              requester.set(
                  pair.client.engine.requestChannel(
                      null, Frames.utf8("first"), 10, false, requesterListener)));
      pair.loop.drain();
      pair.loop.run(() -> stream.get().request(5));
      pair.loop.drain();
      pair.loop.run(() -> stream.get().cancel());
      pair.loop.drain();
      // The requester's outbound half is over; its inbound half is not.
      assertThat(requesterListener.events).containsExactly("ready", "cancel");
      pair.loop.run(
          () -> {
            assertThat(requester.get().isReady()).isFalse();
            assertThat(pair.client.engine.activeStreams()).isEqualTo(1);
            assertThat(pair.server.engine.activeStreams()).isEqualTo(1);
            stream.get().next(null, Frames.utf8("still flowing"));
            stream.get().complete();
          });
      pair.loop.drain();
      assertThat(requesterListener.events)
          .containsExactly("ready", "cancel", "next still flowing", "complete");
      assertThat(pair.loop.call(() -> pair.client.engine.activeStreams())).isZero();
      assertThat(pair.loop.call(() -> pair.server.engine.activeStreams())).isZero();
    }
  }

  @Test
  void tenThousandCancelledChannels_leaveNoActiveStreamOnEitherSide() {
    Responder responder =
        new Responder() {
          @Override
          public StreamListener requestChannel(Stream s, ByteBuf m, ByteBuf d, boolean complete) {
            s.request(1);
            return null;
          }
        };
    try (LoopbackPair pair =
        new LoopbackPair(ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, responder)) {
      for (int batch = 0; batch < 10; batch++) {
        pair.loop.run(
            () -> {
              for (int i = 0; i < 1000; i++) {
                pair.client.engine.requestChannel(null, Frames.utf8("x"), 1, false, null).cancel();
              }
            });
        pair.loop.drain();
      }
      assertThat(pair.loop.call(() -> pair.client.engine.activeStreams())).isZero();
      assertThat(pair.loop.call(() -> pair.server.engine.activeStreams())).isZero();
      // The connection still serves: the responder's concurrency limit was not used up.
      RecordingListener listener = new RecordingListener();
      pair.loop.run(
          () -> pair.client.engine.requestChannel(null, Frames.utf8("y"), 1, false, listener));
      pair.loop.drain();
      assertThat(listener.events).noneMatch(e -> e.startsWith("error"));
      assertThat(pair.loop.call(() -> pair.server.engine.activeStreams())).isEqualTo(1);
    }
  }
}
