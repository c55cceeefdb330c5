package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Stream ids wrap around after 2^31-1, skipping ids still in use, on both sides. */
class StreamIdWrapTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /** Answers request-response at once; keeps request-streams open without sending. */
  private static final class Echo implements Responder {
    final AtomicInteger fireAndForgets = new AtomicInteger();
    final List<Stream> openStreams = new ArrayList<>();

    @Override
    public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
      fireAndForgets.incrementAndGet();
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      stream.next(null, data.retainedSlice());
      return null;
    }

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      openStreams.add(stream);
      return null;
    }
  }

  @Test
  void clientIdsPastTheTop_wrapToOneSkippingOpenStreams_requestsStillAnswered() {
    Echo echo = new Echo();
    try (LoopbackPair pair =
        new LoopbackPair(ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, echo)) {
      ConnectionEngine client = pair.client.engine;
      // Streams 1 and 3 stay open across the wrap.
      pair.loop.run(
          () -> {
            client.requestStream(null, Frames.utf8("a"), 1, null);
            client.requestStream(null, Frames.utf8("b"), 1, null);
            client.nextStreamIdForTest(Integer.MAX_VALUE - 4);
          });
      pair.loop.drain();
      List<Integer> ids = new ArrayList<>();
      List<RecordingListener> listeners = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        RecordingListener l = new RecordingListener();
        listeners.add(l);
        int n = i;
        pair.loop.run(
            () -> ids.add(client.requestResponse(null, Frames.utf8("r" + n), l).streamId()));
        pair.loop.drain();
      }
      pair.loop.run(() -> client.fireAndForget(null, Frames.utf8("f")));
      pair.loop.drain();
      assertThat(ids)
          .containsExactly(
              Integer.MAX_VALUE - 4, Integer.MAX_VALUE - 2, Integer.MAX_VALUE, 5, 7, 9);
      for (int i = 0; i < 6; i++) {
        assertThat(listeners.get(i).events).containsExactly("next r" + i, "complete");
      }
      assertThat(echo.fireAndForgets).hasValue(1);
      assertThat(pair.loop.call(client::isOpen)).isTrue();
      assertThat(pair.loop.call(client::activeStreams)).isEqualTo(2);
      assertThat(pair.loop.call(() -> pair.server.engine.activeStreams())).isEqualTo(2);
    }
  }

  @Test
  void serverIdsPastTheTop_wrapToTwo() {
    AtomicInteger clientAnswers = new AtomicInteger();
    Responder clientResponder =
        new Responder() {
          @Override
          public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
            clientAnswers.incrementAndGet();
            stream.next(null, data.retainedSlice());
            return null;
          }
        };
    try (LoopbackPair pair =
        new LoopbackPair(
            ConnectionConfig.DEFAULT,
            ConnectionConfig.DEFAULT,
            (setup, connection) -> Responder.REJECT_ALL,
            clientResponder)) {
      ConnectionEngine server = pair.server.engine;
      List<Integer> ids = new ArrayList<>();
      pair.loop.run(() -> server.nextStreamIdForTest(Integer.MAX_VALUE - 1));
      for (int i = 0; i < 3; i++) {
        pair.loop.run(
            () -> ids.add(server.requestResponse(null, Frames.utf8("x"), null).streamId()));
        pair.loop.drain();
      }
      assertThat(ids).containsExactly(Integer.MAX_VALUE - 1, 2, 4);
      assertThat(clientAnswers).hasValue(3);
    }
  }

  @Test
  void wrapWithEveryLowIdBusy_skipsPastAllOfThem() {
    Echo echo = new Echo();
    try (LoopbackPair pair =
        new LoopbackPair(ConnectionConfig.DEFAULT, ConnectionConfig.DEFAULT, echo)) {
      ConnectionEngine client = pair.client.engine;
      pair.loop.run(
          () -> {
            for (int i = 0; i < 100; i++) {
              client.requestStream(null, Frames.utf8("s"), 1, null); // ids 1..199
            }
            client.nextStreamIdForTest(Integer.MAX_VALUE);
          });
      pair.loop.drain();
      List<Integer> ids = new ArrayList<>();
      pair.loop.run(
          () -> {
            ids.add(client.requestResponse(null, Frames.utf8("a"), null).streamId());
            ids.add(client.requestResponse(null, Frames.utf8("b"), null).streamId());
          });
      assertThat(ids).containsExactly(Integer.MAX_VALUE, 201);
    }
  }
}
