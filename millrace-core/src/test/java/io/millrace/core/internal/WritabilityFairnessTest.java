package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Producers paused by a full transport are woken first come, first served: when the transport fills
 * again the rest keep their place, so no stream starves behind the first ones.
 */
class WritabilityFairnessTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /** A server whose responder answers each request-stream with {@code onRequest}'s listener. */
  private ScriptedTransport streamServer(Function<Stream, StreamListener> onRequest) {
    return ScriptedTransport.server(
        loop,
        ConnectionConfig.DEFAULT,
        (s, c) ->
            new Responder() {
              @Override
              public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                return onRequest.apply(stream);
              }
            });
  }

  /**
   * A server whose first request-stream gets {@code producer}; later ones get no listener (streams
   * a test writes on from a loop task). Every stream is added to {@code streams}.
   */
  private ScriptedTransport producerThenWriter(List<Stream> streams, StreamListener producer) {
    return streamServer(
        stream -> {
          streams.add(stream);
          return streams.size() == 1 ? producer : null;
        });
  }

  /** A producer that sends one payload per onReady and then reports the transport full. */
  private static final class OneShotProducer implements StreamListener {
    final int index;
    final List<Integer> order;
    final ScriptedTransport transport;

    OneShotProducer(int index, List<Integer> order, ScriptedTransport transport) {
      this.index = index;
      this.order = order;
      this.transport = transport;
    }

    @Override
    public void onReady(Stream stream) {
      if (stream.isReady()) {
        order.add(index);
        stream.next(null, Frames.utf8("p" + index));
        transport.writable = false; // this send filled the transport
        stream.isReady(); // the producer sees it must wait
      }
    }
  }

  @Test
  void writableAgainInsideAFlushAtAWritesEnd_producersToldByTheNextTask_notInTheMiddle() {
    boolean[] flushing = new boolean[1];
    boolean[] toldInsideTheFlush = new boolean[1];
    int[] told = new int[1];
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport t =
        producerThenWriter(
            streams,
            new StreamListener() {
              @Override
              public void onReady(Stream st) {
                told[0]++;
                toldInsideTheFlush[0] |= flushing[0];
                st.isReady(); // waits again while the transport is full
              }
            });
    t.inject(Frames.setup());
    loop.run(() -> t.writable = false);
    t.inject(Frames.requestStream(1, 1000, "producer"), Frames.requestStream(3, 10, "writer"));
    int toldBefore = loop.call(() -> told[0]);
    t.onFlush =
        () -> {
          if (t.writable) {
            return; // told once: in the first flush, the one at the write's end below
          }
          flushing[0] = true; // Netty tells of writability from inside flush()
          t.writable = true;
          t.listener().onWritabilityChanged();
          flushing[0] = false;
        };
    // Outside a read, a 40 KB frame passes the byte count: flushed at its write's end.
    loop.run(() -> streams.get(1).next(null, Unpooled.wrappedBuffer(new byte[40_000])));
    loop.drain();
    t.onFlush = null;
    assertThat(loop.call(() -> told[0])).isGreaterThan(toldBefore);
    assertThat(toldInsideTheFlush[0]).isFalse();
    assertThat(t.take()).isNotEmpty();
  }

  @Test
  void wakeUps_roundRobinAcrossProducers_noneStarves() {
    List<Integer> order = new ArrayList<>();
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport[] holder = new ScriptedTransport[1];
    ScriptedTransport t =
        streamServer(
            stream -> {
              streams.add(stream);
              return new OneShotProducer(streams.size() - 1, order, holder[0]);
            });
    holder[0] = t;
    t.inject(Frames.setup());
    loop.run(() -> t.writable = false);
    for (int i = 0; i < 4; i++) {
      t.inject(Frames.requestStream(1 + 2 * i, 1000, "q"));
    }
    assertThat(order).isEmpty();
    for (int round = 0; round < 8; round++) {
      t.setWritable(true); // each wake-up lets exactly one producer send before it fills again
    }
    assertThat(order).containsExactly(0, 1, 2, 3, 0, 1, 2, 3);
  }

  @Test
  void finishedStreamLeavesTheQueue() {
    List<Integer> order = new ArrayList<>();
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport[] holder = new ScriptedTransport[1];
    ScriptedTransport t =
        streamServer(
            stream -> {
              streams.add(stream);
              return new OneShotProducer(streams.size() - 1, order, holder[0]);
            });
    holder[0] = t;
    t.inject(Frames.setup());
    loop.run(() -> t.writable = false);
    t.inject(Frames.requestStream(1, 10, "a"), Frames.requestStream(3, 10, "b"));
    t.inject(Frames.cancel(1));
    t.setWritable(true);
    t.setWritable(true);
    assertThat(order).containsExactly(1, 1);
  }

  @Test
  void producerThatNeverFillsTheTransport_yieldsTheLoopEveryTurn_thenResumes() {
    List<Integer> writesPerOnReady = new ArrayList<>();
    List<Boolean> otherTaskRanBetween = new ArrayList<>();
    boolean[] marker = new boolean[1];
    ScriptedTransport t =
        streamServer(
            stream -> {
              return new StreamListener() {
                int sent;

                @Override
                public void onReady(Stream s) {
                  otherTaskRanBetween.add(marker[0]);
                  marker[0] = false;
                  // Another connection's work, queued behind this producer's turn.
                  s.connection().executor().execute(() -> marker[0] = true);
                  int before = sent;
                  while (sent < 10_000 && s.isReady()) {
                    s.next(null, Frames.utf8("x"));
                    sent++;
                  }
                  writesPerOnReady.add(sent - before);
                }
              };
            });
    t.inject(Frames.setup(), Frames.requestStream(1, Integer.MAX_VALUE, "q"));
    assertThat(t.take()).hasSize(10_000);
    assertThat(writesPerOnReady)
        .containsExactly(
            Flusher.WRITES_PER_TURN, Flusher.WRITES_PER_TURN, 10_000 - 2 * Flusher.WRITES_PER_TURN);
    assertThat(otherTaskRanBetween).containsExactly(false, true, true);
  }

  @Test
  void aTurnUsedUpByOtherWrites_aProducerWaitingForTheTransport_stillGetsTheNextTurn()
      throws Exception {
    // Writability that comes back does not start a turn (it can come back inside a task); a
    // producer it cannot wake because the turn is used up gets the next turn, after the poll,
    // even when no read comes to start one.
    int[] told = new int[1];
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport t =
        producerThenWriter(
            streams,
            new StreamListener() {
              @Override
              public void onReady(Stream s) {
                told[0]++;
              }
            });
    t.inject(Frames.setup());
    loop.run(() -> t.writable = false);
    t.inject(
        Frames.requestStream(1, 1000, "producer"),
        Frames.requestStream(3, Integer.MAX_VALUE, "writer"));
    int toldBefore = loop.call(() -> told[0]);
    loop.run(
        () -> {
          assertThat(streams.get(0).isReady()).isFalse(); // waits for the transport
          for (int i = 0; i < Flusher.WRITES_PER_TURN; i++) {
            streams.get(1).next(null, Frames.utf8("w"));
          }
          t.writable = true;
          t.listener().onWritabilityChanged(); // the turn is used up: not told now
          assertThat(told[0]).isEqualTo(toldBefore);
        });
    for (int i = 0; i < 500 && loop.call(() -> told[0]) == toldBefore; i++) {
      Thread.sleep(10);
    }
    assertThat(loop.call(() -> told[0])).as("told in the next turn").isGreaterThan(toldBefore);
    assertThat(t.take()).hasSizeGreaterThanOrEqualTo(Flusher.WRITES_PER_TURN);
  }
}
