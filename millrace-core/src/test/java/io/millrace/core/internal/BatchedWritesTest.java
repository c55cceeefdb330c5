package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Frames encoded back to back into one buffer for byte-stream transports. */
class BatchedWritesTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private ScriptedTransport coalescingServer(AtomicReference<Stream> captured) {
    return coalescingServer(
        new ScriptedTransport(loop),
        new Responder() {
          @Override
          public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
            captured.set(stream);
            return null;
          }

          @Override
          public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
            stream.next(m == null ? null : m.retainedSlice(), d.retainedSlice());
            return null;
          }
        });
  }

  /** Starts a server with {@code responder} on {@code t}, made to batch frames, set up. */
  private ScriptedTransport coalescingServer(ScriptedTransport t, Responder responder) {
    t.coalesce = true;
    t.engine =
        ConnectionEngine.server(
            t, ConnectionConfig.DEFAULT, (s, c) -> responder, null, null, t.timers);
    loop.run(() -> t.engine.start(null, null));
    t.inject(Frames.setup());
    return t;
  }

  @Test
  void manySmallFrames_comeOutWholeAndInOrder_inFewWrites() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = coalescingServer(stream);
    t.inject(Frames.requestStream(1, Integer.MAX_VALUE, "q"));
    loop.run(
        () -> {
          for (int i = 0; i < 1000; i++) {
            stream.get().next(i % 2 == 0 ? null : Frames.utf8("m" + i), Frames.utf8("d" + i));
          }
          stream.get().complete();
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1001);
    for (int i = 0; i < 1000; i++) {
      assertThat(frames.get(i).data).isEqualTo("d" + i);
      assertThat(frames.get(i).metadata).isEqualTo(i % 2 == 0 ? null : "m" + i);
    }
    assertThat(frames.get(1000).has(FrameHeader.FLAG_COMPLETE)).isTrue();
    assertThat(t.batchesWritten).isLessThan(20);
  }

  @Test
  void largePayloadBetweenSmallOnes_orderKept() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = coalescingServer(stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    String big = "x".repeat(20_000);
    loop.run(
        () -> {
          stream.get().next(null, Frames.utf8("small-1"));
          stream
              .get()
              .next(null, Unpooled.copiedBuffer(big, java.nio.charset.StandardCharsets.UTF_8));
          stream.get().next(null, Frames.utf8("small-2"));
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data.length()).containsExactly(7, 20_000, 7);
  }

  @Test
  void requestsAnsweredInOneReadBatch_flushedOnceAsOneBatch() {
    ScriptedTransport t = coalescingServer(new AtomicReference<>());
    loop.drain();
    int flushesBefore = loop.call(() -> t.flushes);
    int batchesBefore = loop.call(() -> t.batchesWritten);
    ByteBuf[] requests = new ByteBuf[100];
    for (int i = 0; i < requests.length; i++) {
      requests[i] = Frames.requestResponse(1 + 2 * i, null, "r" + i);
    }
    t.inject(requests);
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(100).extracting(f -> f.type).containsOnly(FrameType.PAYLOAD);
    assertThat(frames.get(99).data).isEqualTo("r99");
    assertThat(loop.call(() -> t.flushes) - flushesBefore).isEqualTo(1);
    assertThat(loop.call(() -> t.batchesWritten) - batchesBefore).isEqualTo(1);
  }

  @Test
  void longReadBatch_flushedEvery256Writes_soThePeerIsNotLeftWaiting() {
    ScriptedTransport t = coalescingServer(new AtomicReference<>());
    loop.drain();
    int flushesBefore = loop.call(() -> t.flushes);
    ByteBuf[] requests = new ByteBuf[600];
    for (int i = 0; i < requests.length; i++) {
      requests[i] = Frames.requestResponse(1 + 2 * i, null, "r" + i);
    }
    t.inject(requests);
    assertThat(t.take()).hasSize(600);
    // 256 and 512 answers in, then the read's end
    assertThat(loop.call(() -> t.flushes) - flushesBefore).isEqualTo(3);
  }

  @Test
  void firstCreditOfARead_isFlushedAtOnce_laterCreditAtTheReadsEnd() {
    // A channel responder that asks for one more payload as each arrives, noting how many flushes
    // the (batching) transport had seen by then and how many frames had been handed to it.
    List<String> atRequest = new ArrayList<>();
    AtomicReference<Stream> channel = new AtomicReference<>();
    ScriptedTransport t = new ScriptedTransport(loop);
    StreamListener asksForMore =
        new StreamListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            stream.request(1);
            atRequest.add(t.flushes + " flushes, " + t.written.size() + " handed over");
          }
        };
    coalescingServer(
        t,
        new Responder() {
          @Override
          public StreamListener requestChannel(
              Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
            channel.set(stream);
            stream.request(3);
            return asksForMore;
          }
        });
    t.inject(Frames.requestChannel(1, 1, "first", false));
    t.take();
    int f = loop.call(() -> t.flushes);

    t.inject(Frames.next(1, "a"), Frames.next(1, "b"), Frames.next(1, "c"));

    // The first REQUEST_N went out while the read went on; the other two waited in the batch for
    // the read's end.
    assertThat(atRequest)
        .containsExactly(
            (f + 1) + " flushes, 1 handed over",
            (f + 1) + " flushes, 1 handed over",
            (f + 1) + " flushes, 1 handed over");
    assertThat(loop.call(() -> t.flushes)).isEqualTo(f + 2);
    assertThat(t.take())
        .extracting(w -> w.type)
        .containsExactly(FrameType.REQUEST_N, FrameType.REQUEST_N, FrameType.REQUEST_N);

    // A new read batch sends its first credit early again.
    t.inject(Frames.next(1, "d"));
    assertThat(atRequest).element(3).isEqualTo((f + 3) + " flushes, 1 handed over");
    assertThat(t.take()).hasSize(1);

    // Outside a read (here after one that wrote no credit), credit waits for the flush task like
    // any other write.
    t.inject(Frames.keepAlive(false, "k"));
    assertThat(t.take()).isEmpty();
    assertThat(loop.call(() -> t.flushes)).isEqualTo(f + 3);
    assertThat(
            loop.call(
                () -> {
                  channel.get().request(5);
                  return t.flushes;
                }))
        .isEqualTo(f + 3);
    assertThat(t.take()).extracting(w -> w.n).containsExactly(5L);
    assertThat(loop.call(() -> t.flushes)).isEqualTo(f + 4);
  }

  @Test
  void outsideARead_aLongFrameWrittenAlone_isFlushedAtOnce() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = coalescingServer(stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    loop.drain();
    int[] flushedWithin = new int[1];
    loop.run(
        () -> {
          int before = t.flushes;
          stream.get().next(null, Unpooled.wrappedBuffer(new byte[40_000]));
          flushedWithin[0] = t.flushes - before; // before the task's own flush could run
        });
    assertThat(flushedWithin[0]).isEqualTo(1);
    assertThat(t.take()).hasSize(1);
  }

  @Test
  void outsideARead_aWriteFromInsideTheFlush_isKeptInOrder() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = coalescingServer(stream);
    t.inject(Frames.requestStream(1, Integer.MAX_VALUE, "q"));
    loop.drain();
    int n = 5_000; // 14-byte frames: 70 KB, so a flush comes between two writes of the loop below
    boolean[] nested = new boolean[1];
    t.onFlush =
        () -> {
          if (!nested[0]) {
            nested[0] = true; // as a producer told of writability inside the flush would write
            stream.get().next(null, Frames.utf8("nested"));
          }
        };
    int[] wroteBeforeFlush = {-1};
    loop.run(
        () -> {
          for (int i = 0; i < n; i++) {
            stream.get().next(null, Frames.utf8(String.format("%05d", i)));
            if (nested[0] && wroteBeforeFlush[0] < 0) {
              wroteBeforeFlush[0] = i + 1;
            }
          }
        });
    t.onFlush = null;
    List<WireFrame> frames = t.take();
    assertThat(nested[0]).isTrue();
    assertThat(frames).hasSize(n + 1);
    assertThat(loop.call(() -> t.unflushed)).as("all flushed by the task's end").isZero();
    int at = wroteBeforeFlush[0];
    assertThat(frames.get(at).data).isEqualTo("nested");
    for (int i = 0; i < n; i++) {
      assertThat(frames.get(i < at ? i : i + 1).data).isEqualTo(String.format("%05d", i));
    }
  }

  @Test
  void connectionError_afterBatchedWrites_errorFollowsThemAndNothingLeaks() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = coalescingServer(stream);
    t.inject(Frames.requestStream(1, 5, "q"));
    ByteBuf bad = Frames.requestN(1, 5);
    bad.writerIndex(bad.writerIndex() - 1);
    loop.run(() -> stream.get().next(null, Frames.utf8("before")));
    t.inject(bad);
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.type).containsExactly(FrameType.PAYLOAD, FrameType.ERROR);
    assertThat(frames.get(1).errorCode).isEqualTo(ErrorCode.CONNECTION_ERROR);
  }
}
