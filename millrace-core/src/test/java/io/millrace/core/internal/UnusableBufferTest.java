package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An application that passes a released buffer fails that call or stream only: frames batched
 * before it and written after it reach the peer intact, and nothing leaks.
 */
class UnusableBufferTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /**
   * A released buffer that stays released: unpooled, since a released pooled buffer object is
   * recycled and may come back alive as somebody else's buffer (a use-after-free no library can
   * detect).
   */
  private static ByteBuf released(String text) {
    ByteBuf b = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    b.release();
    return b;
  }

  private ScriptedTransport server(boolean coalesce, List<Stream> streams) {
    return server(
        coalesce,
        new Responder() {
          @Override
          public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
            streams.add(stream);
            return null;
          }
        });
  }

  /** A server connection set up and answering with {@code responder}. */
  private ScriptedTransport server(boolean coalesce, Responder responder) {
    ScriptedTransport t = new ScriptedTransport(loop);
    t.coalesce = coalesce;
    t.engine =
        ConnectionEngine.server(
            t,
            ConnectionConfig.builder().fragmentSize(64).build(),
            (s, c) -> responder,
            null,
            null,
            t.timers);
    loop.run(() -> t.engine.start(null, null));
    t.inject(Frames.setup());
    return t;
  }

  @ParameterizedTest(name = "coalescing={0}")
  @ValueSource(booleans = {true, false})
  void releasedBufferInTheMiddleOfABatch_failsThatStreamOnly(boolean coalesce) {
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport t = server(coalesce, streams);
    t.inject(Frames.requestStream(1, 100, "a"), Frames.requestStream(3, 100, "b"));
    RecordingListener broken = new RecordingListener();
    loop.run(
        () -> {
          streams.get(1).next(null, Frames.utf8("warm-up")); // starts the batch
          streams.get(0).next(null, Frames.utf8("before"));
          ((DefaultStream) streams.get(1)).listener = broken;
          streams.get(1).next(Frames.utf8("meta"), released("broken"));
          streams.get(0).next(null, Frames.utf8("after"));
          streams.get(0).next(null, Frames.utf8("x".repeat(200))); // fragmented
          streams.get(0).complete();
        });
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type, f -> f.streamId, f -> f.data, f -> f.errorCode)
        .startsWith(
            tuple(FrameType.PAYLOAD, 3, "warm-up", 0),
            tuple(FrameType.PAYLOAD, 1, "before", 0),
            tuple(FrameType.ERROR, 3, null, ErrorCode.APPLICATION_ERROR),
            tuple(FrameType.PAYLOAD, 1, "after", 0));
    WireFrame last = frames.get(frames.size() - 1);
    assertThat(last.flags & FrameHeader.FLAG_COMPLETE).isNotZero();
    assertThat(broken.events).containsExactly("error 0x201: " + frames.get(2).message);
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    assertThat(t.closed).isFalse();
  }

  @Test
  void releasedBufferInAFragmentedPayload_nothingOfItWritten() {
    List<Stream> streams = new ArrayList<>();
    ScriptedTransport t = server(true, streams);
    t.inject(Frames.requestStream(1, 100, "a"));
    loop.run(() -> streams.get(0).next(null, released("y".repeat(500))));
    assertThat(t.take())
        .extracting(f -> f.type, f -> f.errorCode)
        .containsExactly(tuple(FrameType.ERROR, ErrorCode.APPLICATION_ERROR));
  }

  @Test
  void requestWithReleasedBuffer_listenerFailsLocally_nothingSent_laterRequestsFine() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null, true);
    t.take();
    RecordingListener ok1 = new RecordingListener();
    RecordingListener bad = new RecordingListener();
    RecordingListener ok2 = new RecordingListener();
    AtomicReference<Throwable> fnf = new AtomicReference<>();
    loop.run(
        () -> {
          t.engine.requestResponse(null, Frames.utf8("one"), ok1);
          t.engine.requestStream(null, released("bad"), 5, bad);
          try {
            t.engine.fireAndForget(null, released("bad fnf"));
          } catch (IllegalArgumentException e) {
            fnf.set(e);
          }
          t.engine.requestResponse(Frames.utf8("m"), Frames.utf8("two"), ok2);
        });
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type, f -> f.data)
        .containsExactly(
            tuple(FrameType.REQUEST_RESPONSE, "one"), tuple(FrameType.REQUEST_RESPONSE, "two"));
    assertThat(bad.events).hasSize(1);
    assertThat(bad.events.get(0)).startsWith("error 0x204: ");
    assertThat(fnf.get()).hasMessageContaining("unusable");
    assertThat(loop.call(() -> t.engine.activeStreams())).isEqualTo(2);
  }

  @Test
  void metadataPushWithReleasedBuffer_throwsOnTheLoop() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(
        () ->
            assertThatThrownBy(() -> t.engine.metadataPush(released("m")))
                .isInstanceOf(IllegalArgumentException.class));
    assertThat(t.take()).isEmpty();
  }

  @Test
  void lentMetadataPassedOnAsOwned_failsThatStream_andTheDataIsNotLeaked() {
    // A responder that echoes a request's metadata without retainedSlice(): the metadata is only
    // lent, so it refuses release() once it is written; the data it did keep must not leak.
    List<ByteBuf> keptData = new ArrayList<>();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    ScriptedTransport t =
        server(
            false,
            new Responder() {
              @Override
              public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                ByteBuf data = d.retainedSlice();
                keptData.add(data);
                try {
                  stream.next(m, data); // m is lent: a mistake
                } catch (RuntimeException e) {
                  thrown.set(e);
                }
                return null;
              }
            });
    t.inject(Frames.requestResponse(1, "meta", "data"));

    // As with any unusable buffer: the stream fails (the peer gets an ERROR), the connection goes
    // on, and nothing is thrown into the handler.
    assertThat(thrown.get()).isNull();
    assertThat(t.take())
        .extracting(f -> f.type, f -> f.streamId)
        .endsWith(tuple(FrameType.ERROR, 1));
    assertThat(keptData).hasSize(1);
    assertThat(keptData.get(0).refCnt()).as("the kept data was released").isZero();
    assertThat(loop.call(() -> t.engine.isOpen())).isTrue();
  }
}
