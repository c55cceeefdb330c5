package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StreamLifecycleTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  @Test
  void requesterCancel_sendsCancelAndDropsLaterPayloads() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    RecordingListener listener = new RecordingListener();
    AtomicReference<Stream> stream = new AtomicReference<>();
    loop.run(() -> stream.set(t.engine.requestStream(null, Frames.utf8("q"), 10, listener)));
    t.inject(Frames.next(1, "a"));
    loop.run(() -> stream.get().cancel());
    t.inject(Frames.next(1, "late"), Frames.complete(1));
    assertThat(listener.events).containsExactly("next a");
    assertThat(t.take())
        .extracting(f -> f.type)
        .containsExactly(FrameType.REQUEST_STREAM, FrameType.CANCEL);
    assertThat(t.closed).isFalse();
  }

  @Test
  void responderSeesCancel_listenerNotifiedAndStreamRemoved() {
    RecordingListener listener = new RecordingListener();
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    return listener;
                  }
                });
    t.inject(Frames.setup(), Frames.requestStream(1, 5, "q"));
    assertThat(loop.call(() -> t.engine.activeStreams())).isEqualTo(1);
    t.inject(Frames.cancel(1));
    assertThat(listener.events).containsExactly("ready", "cancel");
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  @Test
  void errorFrame_everyCode_reachesRequesterWithMessage() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    t.take();
    int[] codes = {
      ErrorCode.APPLICATION_ERROR,
      ErrorCode.REJECTED,
      ErrorCode.CANCELED,
      ErrorCode.INVALID,
      0x00000301,
      0x7FFFFFFF
    };
    List<RecordingListener> listeners = new ArrayList<>();
    loop.run(
        () -> {
          for (int i = 0; i < codes.length; i++) {
            RecordingListener l = new RecordingListener();
            listeners.add(l);
            t.engine.requestResponse(null, Frames.utf8("q"), l);
          }
        });
    for (int i = 0; i < codes.length; i++) {
      t.inject(Frames.error(1 + 2 * i, codes[i], "message " + i));
    }
    for (int i = 0; i < codes.length; i++) {
      assertThat(listeners.get(i).events)
          .containsExactly("error 0x" + Integer.toHexString(codes[i]) + ": message " + i);
    }
    assertThat(t.closed).isFalse();
  }

  @Test
  void responderError_sentAsErrorFrameWithMessage() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    stream.error(
                        ErrorCode.APPLICATION_ERROR,
                        "bad: " + d.toString(java.nio.charset.StandardCharsets.UTF_8));
                    return null;
                  }
                });
    t.inject(Frames.setup(), Frames.requestResponse(1, null, "input"));
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(1);
    assertThat(frames.get(0).streamId).isEqualTo(1);
    assertThat(frames.get(0).errorCode).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(frames.get(0).message).isEqualTo("bad: input");
  }

  @Test
  void responderThrows_applicationErrorOnThatStreamOnly() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    throw new IllegalStateException("handler bug");
                  }
                });
    t.inject(Frames.setup(), Frames.requestResponse(1, null, "x"));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.APPLICATION_ERROR);
    assertThat(frames.get(0).message).isEqualTo("the handler failed");
    assertThat(t.closed).isFalse();
  }

  @Test
  void responderThrows_withErrorMessagesFromHandlersOn_messageSent() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.builder().errorMessagesFromHandlers(true).build(),
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    throw new IllegalStateException("handler bug");
                  }
                });
    t.inject(Frames.setup(), Frames.requestResponse(1, null, "x"));
    assertThat(t.take()).extracting(f -> f.message).containsExactly("handler bug");
  }

  @Test
  void responderThrowsStreamErrorException_itsCodeAndMessageSent() {
    int userCode = ErrorCode.MIN_USER_ALLOWED + 3;
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    throw new StreamErrorException(userCode, "quota exceeded");
                  }

                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    // A code no stream may carry is sent as APPLICATION_ERROR.
                    throw new StreamErrorException(ErrorCode.CONNECTION_CLOSE, "not a stream code");
                  }

                  @Override
                  public StreamListener requestChannel(
                      Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
                    // A backend's error passed on is not forwarded: neither its code nor its text.
                    throw StreamErrorException.received(userCode, "backend at 10.0.0.7 said no");
                  }
                });
    t.inject(
        Frames.setup(),
        Frames.requestResponse(1, null, "x"),
        Frames.requestStream(3, 1, "y"),
        Frames.requestChannel(5, 1, "z", true));
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.errorCode)
        .containsExactly(userCode, ErrorCode.APPLICATION_ERROR, ErrorCode.APPLICATION_ERROR);
    assertThat(frames)
        .extracting(f -> f.message)
        .containsExactly("quota exceeded", "not a stream code", "the handler failed");
    assertThat(t.closed).isFalse();
  }

  @Test
  void listenerThrows_messageNotSentByDefault() {
    ScriptedTransport t =
        serverWhoseChannelListener(
            () -> {
              throw new IllegalStateException("secret table name");
            });
    t.inject(Frames.setup(), Frames.requestChannel(1, 1, "x", false), Frames.next(1, "boom"));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.type).contains(FrameType.ERROR);
    assertThat(frames).noneMatch(f -> f.message != null && f.message.contains("secret"));
  }

  /**
   * Listeners that throw a checked exception they do not declare (Kotlin, Lombok's
   * {@code @SneakyThrows}): the responder's stream fails with APPLICATION_ERROR and the fixed text,
   * the requester's is cancelled, and the connection stays open (the exception went up through the
   * transport before).
   */
  @Test
  void listenerThrowsACheckedExceptionUndeclared_failsThatStreamOnly() {
    java.io.IOException gone = new java.io.IOException("the listener's file was gone");
    ScriptedTransport t =
        serverWhoseChannelListener(() -> io.millrace.testing.Undeclared.thrown(gone));
    t.inject(Frames.setup(), Frames.requestChannel(1, 1, "x", false), Frames.next(1, "boom"));
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .filteredOn(f -> f.type == FrameType.ERROR)
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.errorCode).isEqualTo(ErrorCode.APPLICATION_ERROR);
              assertThat(f.message).isEqualTo("the handler failed");
            });
    assertThat(t.closed).isFalse();

    ScriptedTransport requester = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    requester.take();
    loop.run(
        () ->
            requester.engine.requestStream(
                null,
                Frames.utf8("q"),
                8,
                new StreamListener() {
                  @Override
                  public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
                    io.millrace.testing.Undeclared.thrown(gone);
                  }
                }));
    requester.take();
    requester.inject(Frames.next(1, "first"));
    assertThat(requester.take()).extracting(f -> f.type).containsExactly(FrameType.CANCEL);
    assertThat(loop.call(() -> requester.engine.activeStreams())).isZero();
    assertThat(requester.closed).isFalse();
  }

  /** A server that asks a channel for one payload and whose listener runs {@code onNext} on it. */
  private ScriptedTransport serverWhoseChannelListener(Runnable onNext) {
    return ScriptedTransport.server(
        loop,
        ConnectionConfig.DEFAULT,
        (s, c) ->
            new Responder() {
              @Override
              public StreamListener requestChannel(
                  Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
                stream.request(1);
                return new StreamListener() {
                  @Override
                  public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
                    onNext.run();
                  }
                };
              }
            });
  }

  @Test
  void acceptorThrows_messageNotSentByDefault() {
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) -> {
              throw new IllegalStateException("jdbc:postgresql://internal-host/users");
            });
    t.inject(Frames.setup());
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.REJECTED_SETUP);
    assertThat(frames.get(0).message).isEqualTo("the acceptor failed");
  }

  @Test
  void framesForUnknownStreams_ignored() {
    ScriptedTransport t =
        ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.setup());
    t.inject(
        Frames.next(41, "late"),
        Frames.complete(41),
        Frames.requestN(43, 5),
        Frames.cancel(45),
        Frames.error(47, ErrorCode.APPLICATION_ERROR, "late"));
    assertThat(t.take()).isEmpty();
    assertThat(t.closed).isFalse();
  }

  @Test
  void requestOnStreamIdInUse_ignored() {
    List<String> seen = new ArrayList<>();
    ScriptedTransport t =
        ScriptedTransport.server(
            loop,
            ConnectionConfig.DEFAULT,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    seen.add(d.toString(java.nio.charset.StandardCharsets.UTF_8));
                    return null;
                  }
                });
    t.inject(
        Frames.setup(), Frames.requestStream(1, 1, "first"), Frames.requestStream(1, 1, "dup"));
    assertThat(seen).containsExactly("first");
  }

  @Test
  void requestWithThisSidesParity_connectionError() {
    ScriptedTransport t =
        ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.setup(), Frames.requestResponse(2, null, "even id from a client"));
    assertThat(t.take()).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(t.closed).isTrue();
  }

  @Test
  void malformedFrame_connectionErrorAndClose() {
    ScriptedTransport t =
        ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.setup());
    ByteBuf truncated = Frames.requestN(1, 5);
    truncated.writerIndex(truncated.writerIndex() - 2);
    t.inject(truncated);
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(frames.get(0).message).contains("REQUEST_N");
    assertThat(t.closed).isTrue();
  }

  @Test
  void frameTooLong_connectionErrorAndClose() {
    ScriptedTransport t =
        ScriptedTransport.server(loop, ConnectionConfig.DEFAULT, (s, c) -> Responder.REJECT_ALL);
    t.inject(Frames.setup());
    loop.run(() -> t.engine.onFrameTooLong(5_000_000));
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.errorCode).containsExactly(ErrorCode.CONNECTION_ERROR);
    assertThat(frames.get(0).message).contains("5000000");
    assertThat(t.closed).isTrue();
  }

  @Test
  void connectionClosed_openStreamsFailOnBothSides() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestStream(null, Frames.utf8("q"), 1, listener));
    loop.run(() -> t.engine.dispose());
    loop.drain();
    assertThat(listener.events).hasSize(1);
    assertThat(listener.events.get(0)).startsWith("error");
    assertThat(loop.call(() -> t.engine.isOpen())).isFalse();
    assertThat(t.engine.onClose().toCompletableFuture().isDone()).isTrue();
  }

  @Test
  void requestAfterClose_failsLocally() {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null);
    loop.run(() -> t.engine.dispose());
    loop.drain();
    RecordingListener listener = new RecordingListener();
    loop.run(() -> t.engine.requestResponse(null, Frames.utf8("q"), listener));
    assertThat(listener.events).hasSize(1);
    assertThat(listener.events.get(0)).startsWith("error");
  }
}
