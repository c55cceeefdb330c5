package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LimitsAndBackpressureTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /** Keeps every stream open and sends while ready. */
  private static final class Producer implements StreamListener {
    int sent;

    @Override
    public void onReady(Stream stream) {
      while (stream.isReady()) {
        stream.next(null, Frames.utf8("n" + sent++));
      }
    }
  }

  @Test
  void concurrentStreams_beyondLimit_rejectedWhileOthersContinue() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().maxConcurrentStreams(2).build(),
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    return null; // stays open
                  }
                });
    t.inject(
        Frames.setup(),
        Frames.requestStream(1, 1, "a"),
        Frames.requestStream(3, 1, "b"),
        Frames.requestStream(5, 1, "c"));
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).streamId).isEqualTo(5);
    assertThat(frames.get(0).errorCode).isEqualTo(ErrorCode.REJECTED);
    assertThat(t.closed).isFalse();
    // Once one ends, a new stream is admitted.
    t.inject(Frames.cancel(1), Frames.requestStream(7, 1, "d"));
    assertThat(t.take()).isEmpty();
    assertThat(loop.call(() -> t.engine.activeStreams())).isEqualTo(2);
  }

  @Test
  void producer_pausesWhileNotWritable_resumesOnWritabilityChange() {
    Producer producer = new Producer();
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream st, ByteBuf m, ByteBuf d) {
                    stream.set(st);
                    return producer;
                  }
                });
    t.inject(Frames.setup());
    loop.run(() -> t.writable = false);
    t.inject(Frames.requestStream(1, 5, "go"));
    assertThat(loop.call(() -> stream.get().isReady())).isFalse();
    t.inject(Frames.requestN(1, 3));
    assertThat(producer.sent).isZero();
    assertThat(t.take()).isEmpty();
    // Writable again: the producer is told and sends exactly the credit it has.
    t.setWritable(true);
    assertThat(producer.sent).isEqualTo(8);
    assertThat(t.take()).hasSize(8);
    assertThat(loop.call(() -> stream.get().credit())).isZero();
  }

  @Test
  void readsPaused_whenPeerDoesNotReadAndQueueExceedsLimit_resumedWhenDrained() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().maxQueuedBytes(4096).build(),
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    stream.next(null, d.retainedSlice());
                    return null;
                  }
                });
    t.inject(Frames.setup());
    loop.run(
        () -> {
          t.writable = false;
          t.queuedBytes = 10_000;
        });
    t.inject(Frames.requestResponse(1, null, "x"));
    assertThat(t.reading).isFalse();
    loop.run(
        () -> {
          t.queuedBytes = 0;
          t.writable = true;
          t.engine.onWritabilityChanged();
        });
    assertThat(t.reading).isTrue();
  }

  @Test
  void writesDuringOneReadBatch_flushedOnce() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    stream.next(null, d.retainedSlice());
                    return null;
                  }
                });
    t.inject(Frames.setup());
    loop.drain();
    int before = loop.call(() -> t.flushes);
    ByteBuf[] batch = new ByteBuf[100];
    for (int i = 0; i < batch.length; i++) {
      batch[i] = Frames.requestResponse(1 + 2 * i, null, "r" + i);
    }
    t.inject(batch);
    loop.drain();
    assertThat(t.take()).hasSize(100).extracting(f -> f.type).containsOnly(FrameType.PAYLOAD);
    assertThat(loop.call(() -> t.flushes) - before).isEqualTo(1);
  }

  @Test
  void writesFromOtherThreads_coalescedIntoOneFlushPerTaskBatch() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    int before = loop.call(() -> t.flushes);
    // Block the loop so that all requests queue up behind one task, then release it.
    java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    loop.executor.execute(
        () -> {
          try {
            io.millrace.testing.LoopBlockingExtension.onPurpose(gate::await);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    for (int i = 0; i < 50; i++) {
      t.engine.fireAndForget(null, Frames.utf8("f" + i));
    }
    gate.countDown();
    assertThat(t.take()).hasSize(50);
    assertThat(loop.call(() -> t.flushes) - before).isEqualTo(1);
  }
}
