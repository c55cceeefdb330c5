package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestResponseFrame;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class FragmentationTest {

  private static String text(int length, char seed) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) (seed + i % 26));
    }
    return sb.toString();
  }

  /** Echoes request-response and channel payloads; the client fragments at 64 bytes. */
  private static final Responder ECHO =
      new Responder() {
        @Override
        public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
          stream.next(m == null ? null : m.retainedSlice(), d.retainedSlice());
          return null;
        }

        @Override
        public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
          for (int i = 0; i < 3; i++) {
            stream.next(m == null ? null : m.retainedDuplicate(), d.retainedDuplicate());
          }
          stream.complete();
          return null;
        }
      };

  @Test
  void largePayloads_fragmentedBothWays_arriveIntact() {
    ConnectionConfig fragmenting = ConnectionConfig.builder().fragmentSize(64).build();
    try (LoopbackPair pair = new LoopbackPair(fragmenting, fragmenting, ECHO)) {
      String metadata = text(300, 'a');
      String data = text(5000, 'A');
      RecordingListener listener = new RecordingListener();
      pair.loop.run(
          () ->
              pair.client.engine.requestResponse(
                  Frames.utf8(metadata), Frames.utf8(data), listener));
      pair.loop.drain();
      assertThat(listener.events)
          .containsExactly(
              "next " + RecordingListener.summary(metadata) + "|" + RecordingListener.summary(data),
              "complete");
      // 5300 bytes in frames of at most 61: many fragments each way.
      assertThat(pair.client.framesSent).isGreaterThan(80);
      assertThat(pair.server.framesSent).isGreaterThan(80);
    }
  }

  @Test
  void fragmentedStreamPayloads_eachCountsOnceAgainstCredit() {
    ConnectionConfig fragmenting = ConnectionConfig.builder().fragmentSize(64).build();
    try (LoopbackPair pair = new LoopbackPair(fragmenting, fragmenting, ECHO)) {
      String data = text(1000, 'a');
      RecordingListener listener = new RecordingListener();
      pair.loop.run(() -> pair.client.engine.requestStream(null, Frames.utf8(data), 3, listener));
      pair.loop.drain();
      assertThat(listener.events)
          .containsExactly(
              "next " + RecordingListener.summary(data),
              "next " + RecordingListener.summary(data),
              "next " + RecordingListener.summary(data),
              "complete");
      assertThat(pair.loop.call(() -> pair.client.engine.isOpen())).isTrue();
    }
  }

  @Test
  void fragmentSizeOff_framesAboveMaxFrameLengthStillFragmented() {
    ConnectionConfig small = ConnectionConfig.builder().maxFrameLength(1024).build();
    try (LoopbackPair pair = new LoopbackPair(small, small, ECHO)) {
      String data = text(10_000, 'a');
      RecordingListener listener = new RecordingListener();
      pair.loop.run(() -> pair.client.engine.requestResponse(null, Frames.utf8(data), listener));
      pair.loop.drain();
      assertThat(listener.events)
          .containsExactly("next " + RecordingListener.summary(data), "complete");
    }
  }

  @Test
  void fragmentsOfFirstFrame_carryRequestTypeThenPayloadContinuations() {
    TestLoop loop = new TestLoop();
    try {
      ScriptedTransport t =
          ScriptedTransport.client(loop, ConnectionConfig.builder().fragmentSize(64).build(), null);
      t.take();
      loop.run(
          () ->
              t.engine.requestResponse(
                  Frames.utf8(text(100, 'a')), Frames.utf8(text(100, 'A')), null));
      List<WireFrame> frames = t.take();
      assertThat(frames.get(0).type).isEqualTo(FrameType.REQUEST_RESPONSE);
      assertThat(frames.get(0).has(FrameHeader.FLAG_FOLLOWS)).isTrue();
      for (WireFrame f : frames.subList(1, frames.size())) {
        assertThat(f.type).isEqualTo(FrameType.PAYLOAD);
        assertThat(f.has(FrameHeader.FLAG_NEXT)).isTrue();
      }
      for (WireFrame f : frames.subList(0, frames.size() - 1)) {
        assertThat(f.has(FrameHeader.FLAG_FOLLOWS)).isTrue();
      }
      assertThat(frames.get(frames.size() - 1).has(FrameHeader.FLAG_FOLLOWS)).isFalse();
      StringBuilder metadata = new StringBuilder();
      StringBuilder data = new StringBuilder();
      boolean sawData = false;
      for (WireFrame f : frames) {
        if (f.metadata != null) {
          assertThat(sawData).as("all metadata comes before any data").isFalse();
          metadata.append(f.metadata);
        }
        if (!f.data.isEmpty()) {
          sawData = true;
        }
        data.append(f.data);
      }
      assertThat(metadata.toString()).isEqualTo(text(100, 'a'));
      assertThat(data.toString()).isEqualTo(text(100, 'A'));
    } finally {
      loop.close();
    }
  }

  @Test
  void reassembly_beyondLimit_connectionErrorWithoutBufferingMore() {
    TestLoop loop = new TestLoop();
    try {
      ScriptedTransport t =
          ScriptedTransport.server(
              loop, ConnectionConfig.builder().maxReassembledLength(1000).build(), (s, c) -> ECHO);
      t.inject(Frames.setup());
      ByteBuf chunk = Frames.utf8(text(400, 'a'));
      t.inject(RequestResponseFrame.encode(Frames.ALLOC, 0, 1, true, null, chunk));
      t.inject(
          PayloadFrame.encode(
              Frames.ALLOC, 0, 1, FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_NEXT, null, chunk));
      assertThat(t.take()).isEmpty();
      t.inject(
          PayloadFrame.encode(
              Frames.ALLOC, 0, 1, FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_NEXT, null, chunk));
      chunk.release();
      List<WireFrame> frames = t.take();
      assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
      assertThat(frames.get(0).message).contains("1000");
      assertThat(t.closed).isTrue();
    } finally {
      loop.close();
    }
  }

  @Test
  void reassembly_floodOfEmptyFragments_hitsTheLimit() {
    TestLoop loop = new TestLoop();
    try {
      ScriptedTransport t =
          ScriptedTransport.server(
              loop, ConnectionConfig.builder().maxReassembledLength(1024).build(), (s, c) -> ECHO);
      t.inject(Frames.setup());
      t.inject(RequestResponseFrame.encode(Frames.ALLOC, 0, 1, true, null, null));
      int sent = 0;
      while (!t.closed && sent < 1000) {
        t.inject(
            PayloadFrame.encode(
                Frames.ALLOC, 0, 1, FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_NEXT, null, null));
        sent++;
        loop.drain();
      }
      assertThat(t.closed).isTrue();
      assertThat(sent).isLessThanOrEqualTo(1024 / 16);
      assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    } finally {
      loop.close();
    }
  }

  @Test
  void reassembledRequest_dispatchedOnceWithWholeMetadataAndData() {
    TestLoop loop = new TestLoop();
    try {
      StringBuilder seen = new StringBuilder();
      ScriptedTransport t =
          ScriptedTransport.server(
              loop,
              ConnectionConfig.DEFAULT,
              (s, c) ->
                  new Responder() {
                    @Override
                    public void fireAndForget(Connection connection, ByteBuf m, ByteBuf d) {
                      seen.append(m.toString(StandardCharsets.UTF_8))
                          .append('|')
                          .append(d.toString(StandardCharsets.UTF_8));
                    }
                  });
      t.inject(Frames.setup());
      ByteBuf m1 = Frames.utf8("meta-");
      t.inject(io.millrace.frame.RequestFnfFrame.encode(Frames.ALLOC, 0, 1, true, m1, null));
      m1.release();
      t.inject(Frames.payload(1, FrameHeader.FLAG_FOLLOWS | FrameHeader.FLAG_NEXT, "data", "da"));
      t.inject(Frames.next(1, "ta"));
      assertThat(seen.toString()).isEqualTo("meta-data|data");
      assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
    } finally {
      loop.close();
    }
  }
}
