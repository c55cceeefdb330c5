package io.millrace.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GracefulCloseTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  @Test
  void close_sendsConnectionClose_letsOpenStreamFinish_rejectsNewRequests_thenCloses() {
    AtomicReference<Stream> open = new AtomicReference<>();
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    open.set(stream);
                    return null;
                  }
                });
    t.inject(Frames.setup(), Frames.requestStream(1, 10, "q"));
    loop.run(() -> t.engine.close());
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).streamId).isZero();
    assertThat(frames.get(0).errorCode).isEqualTo(ErrorCode.CONNECTION_CLOSE);
    assertThat(t.closed).isFalse();

    t.inject(Frames.requestStream(3, 1, "too late"));
    frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.REJECTED);
    assertThat(frames.get(0).streamId).isEqualTo(3);

    loop.run(
        () -> {
          open.get().next(null, Frames.utf8("still flowing"));
          open.get().complete();
        });
    frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type)
        .containsExactly(FrameType.PAYLOAD, FrameType.PAYLOAD);
    assertThat(t.closed).isTrue();
  }

  @Test
  void peerConnectionClose_localRequestsRefused_openStreamsDrainThenClose() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener open = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 5, open));
    t.inject(Frames.error(0, ErrorCode.CONNECTION_CLOSE, "server going away"));
    RecordingListener refused = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("new"), refused));
    assertThat(refused.events).hasSize(1);
    assertThat(refused.events.get(0)).startsWith("error 0x202");
    assertThat(t.closed).isFalse();

    t.inject(Frames.next(1, "a"), Frames.complete(1));
    assertThat(open.events).containsExactly("next a", "complete");
    loop.drain();
    assertThat(t.closed).isTrue();
    assertThat(t.take()).extracting(f -> f.type).containsExactly(FrameType.REQUEST_STREAM);
  }

  @Test
  void close_withNoOpenStreams_closesAtOnce() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    loop.run(() -> t.engine.close());
    loop.drain();
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_CLOSE);
    assertThat(t.closed).isTrue();
    assertThat(t.engine.onClose().isSuccess()).isTrue();
  }
}
