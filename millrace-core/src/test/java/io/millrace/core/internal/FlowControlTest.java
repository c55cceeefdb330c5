package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FlowControlTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /** A server whose stream responder hands the stream to the test and sends nothing itself. */
  private ScriptedTransport serverCapturing(AtomicReference<Stream> captured, RecordingListener l) {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    captured.set(stream);
                    return l;
                  }

                  @Override
                  public StreamListener requestChannel(
                      Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
                    captured.set(stream);
                    l.onNext(stream, m, d);
                    return l;
                  }
                });
    t.inject(Frames.setup());
    return t;
  }

  @Test
  void responderStream_sendsOnlyWhatWasGranted_thenWaitsForRequestN() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    RecordingListener listener = new RecordingListener();
    ScriptedTransport t = serverCapturing(stream, listener);
    t.inject(Frames.requestStream(1, 2, "go"));
    loop.run(
        () -> {
          Stream s = stream.get();
          assertThat(s.credit()).isEqualTo(2);
          s.next(null, Frames.utf8("a"));
          s.next(null, Frames.utf8("b"));
          assertThat(s.isReady()).isFalse();
          assertThatThrownBy(() -> s.next(null, Frames.utf8("c")))
              .isInstanceOf(IllegalStateException.class);
        });
    assertThat(t.take()).extracting(f -> f.data).containsExactly("a", "b");
    assertThat(listener.events).containsExactly("ready"); // initial credit, told once
    t.inject(Frames.requestN(1, 3));
    assertThat(listener.events).containsExactly("ready", "ready");
    assertThat(loop.call(() -> stream.get().credit())).isEqualTo(3);
  }

  @Test
  void requestN_maxValue_meansUnboundedAndNeverRunsOut() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = serverCapturing(stream, new RecordingListener());
    t.inject(Frames.requestStream(1, Integer.MAX_VALUE, "go"));
    loop.run(
        () -> {
          Stream s = stream.get();
          assertThat(s.credit()).isEqualTo(Long.MAX_VALUE);
          for (int i = 0; i < 10_000; i++) {
            s.next(null, Frames.utf8("x"));
          }
          assertThat(s.credit()).isEqualTo(Long.MAX_VALUE);
        });
    assertThat(t.take()).hasSize(10_000);
  }

  @Test
  void requestN_grantsAddBeyond32Bits_withoutOverflow() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = serverCapturing(stream, new RecordingListener());
    t.inject(Frames.requestStream(1, Integer.MAX_VALUE - 1, "go"));
    t.inject(Frames.requestN(1, Integer.MAX_VALUE - 1));
    t.inject(Frames.requestN(1, Integer.MAX_VALUE - 1));
    assertThat(loop.call(() -> stream.get().credit())).isEqualTo(3L * (Integer.MAX_VALUE - 1));
  }

  @Test
  void requesterStream_peerSendsBeyondCredit_connectionErrorNotBuffering() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 2, listener));
    assertThat(t.take()).extracting(f -> f.n).containsExactly(2L);
    t.inject(Frames.next(1, "a"), Frames.next(1, "b"), Frames.next(1, "c"));
    loop.drain();
    assertThat(listener.events).hasSize(3);
    assertThat(listener.events.subList(0, 2)).containsExactly("next a", "next b");
    assertThat(listener.events.get(2)).startsWith("error 0x101");
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).errorCode).isEqualTo(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void requesterStream_requestMore_sendsRequestNAndAcceptsThatMany() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener =
        new RecordingListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            super.onNext(stream, metadata, data);
            stream.request(1);
          }
        };
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 1, listener));
    t.take();
    t.inject(Frames.next(1, "a"));
    t.inject(Frames.next(1, "b"));
    t.inject(Frames.payload(1, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE, "m", "c"));
    assertThat(listener.events).containsExactly("next a", "next b", "next m|c", "complete");
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.type).containsOnly(FrameType.REQUEST_N);
    assertThat(t.closed).isFalse();
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  @Test
  void requestChannel_requesterWaitsForResponderCredit() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    AtomicReference<Stream> channel = new AtomicReference<>();
    loop.run(
        () -> {
          Stream s = t.engine.requestChannel(null, Frames.utf8("first"), 8, false, listener);
          channel.set(s);
          assertThat(s.isReady()).isFalse();
        });
    assertThat(t.take()).extracting(f -> f.type).containsExactly(FrameType.REQUEST_CHANNEL);
    t.inject(Frames.requestN(1, 1));
    assertThat(listener.events).containsExactly("ready");
    loop.run(
        () -> {
          channel.get().next(null, Frames.utf8("second"));
          assertThat(channel.get().isReady()).isFalse();
          channel.get().complete();
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data).containsExactly("second", "");
    assertThat(frames.get(1).has(FrameHeader.FLAG_COMPLETE)).isTrue();
  }

  @Test
  void responderChannel_inboundBeyondGrantedCredit_connectionError() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    RecordingListener listener = new RecordingListener();
    ScriptedTransport t = serverCapturing(stream, listener);
    t.inject(Frames.requestChannel(1, 1, "first", false));
    loop.run(() -> stream.get().request(1));
    t.take();
    t.inject(Frames.next(1, "granted"));
    t.inject(Frames.next(1, "not granted"));
    loop.drain();
    assertThat(listener.events).startsWith("next first", "ready", "next granted");
    assertThat(listener.events).doesNotContain("next not granted");
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void requestResponse_payloadWithoutComplete_treatedAsComplete() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("q"), listener));
    t.inject(Frames.next(1, "answer"));
    assertThat(listener.events).containsExactly("next answer", "complete");
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }
}
