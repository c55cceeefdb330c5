package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Stream;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Requests whose data a {@code PayloadEncoder} writes straight into the request frame: on the loop,
 * handed over from another thread, too long for a batch, failing to encode, refused.
 */
class EncodedRequestTest {
  private final TestLoop loop = new TestLoop();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void closeLoop() {
    release.countDown();
    loop.close();
  }

  private ScriptedTransport client(boolean coalesce, ConnectionConfig config) {
    ScriptedTransport t = ScriptedTransport.client(loop, config, null, coalesce);
    t.take();
    return t;
  }

  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void eachRequestKind_onTheLoop_carriesTheEncodedBytes_smallAndLarge(boolean coalesce) {
    ScriptedTransport t = client(coalesce, ConnectionConfig.DEFAULT);
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    String large = "é".repeat(10_000); // 20,000 bytes: beyond a batch's frame limit
    ByteBuf metadata = Frames.utf8("m");
    RecordingListener rr = new RecordingListener();
    RecordingListener rs = new RecordingListener();
    loop.run(
        () -> {
          t.engine.requestResponse(metadata, "one", utf8, rr);
          t.engine.requestStream(null, large, utf8, 7, rs);
          assertThat(t.engine.fireAndForget(null, "", utf8)).isTrue();
          t.engine.requestStream(null, "unbounded", utf8, Long.MAX_VALUE, new RecordingListener());
        });
    List<WireFrame> frames = t.take();
    assertThat(frames)
        .extracting(f -> f.type)
        .containsExactly(
            FrameType.REQUEST_RESPONSE,
            FrameType.REQUEST_STREAM,
            FrameType.REQUEST_FNF,
            FrameType.REQUEST_STREAM);
    assertThat(frames).extracting(f -> f.data).containsExactly("one", large, "", "unbounded");
    assertThat(frames).extracting(f -> f.metadata).containsExactly("m", null, null, null);
    assertThat(frames.get(1).n).isEqualTo(7);
    assertThat(frames.get(3).n).isEqualTo(Integer.MAX_VALUE);
    assertThat(frames).extracting(f -> f.streamId).containsExactly(1, 3, 5, 7);
    assertThat(utf8.encoded).isEqualTo(4);
    assertThat(utf8.intoBuffers)
        .as("only what does not go into a batch is encoded into a buffer of its own")
        .isEqualTo(coalesce ? 1 : 4);
    if (coalesce) {
      assertThat(loop.call(() -> t.batchesWritten)).isPositive();
    }
    assertThat(metadata.refCnt()).isZero();
    // The streams are registered: the responses reach their listeners.
    t.inject(Frames.payload(1, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE, null, "answer"));
    t.inject(Frames.next(3, "item"));
    assertThat(loop.call(() -> List.copyOf(rr.events))).containsExactly("next answer", "complete");
    assertThat(loop.call(() -> List.copyOf(rs.events))).containsExactly("next item");
  }

  @Test
  void encodedRequest_beyondTheFragmentSize_isFragmentedAndReassembles() {
    ScriptedTransport t = client(true, ConnectionConfig.builder().fragmentSize(64).build());
    String text = "0123456789".repeat(30);
    loop.run(
        () ->
            t.engine.requestStream(
                Frames.utf8("meta"),
                text,
                new EncodedPayloadTest.Utf8(),
                5,
                new RecordingListener()));
    List<WireFrame> frames = t.take();
    assertThat(frames.size()).isGreaterThan(4);
    assertThat(frames.get(0).type).isEqualTo(FrameType.REQUEST_STREAM);
    assertThat(frames.get(0).n).isEqualTo(5);
    assertThat(EncodedPayloadTest.reassembled(frames)).containsExactly("meta", text);
  }

  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void encoderThatFails_failsThatRequestOnly_nothingOfItWritten_metadataReleased(boolean coalesce) {
    ScriptedTransport t = client(coalesce, ConnectionConfig.DEFAULT);
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    ByteBuf metadata = Frames.utf8("m");
    ByteBuf fnfMetadata = Frames.utf8("f");
    RecordingListener failed = new RecordingListener();
    List<Throwable> thrown = new ArrayList<>();
    loop.run(
        () -> {
          t.engine.requestResponse(null, "before", utf8, new RecordingListener());
          t.engine.requestResponse(metadata, "fail-now", utf8, failed);
          try {
            t.engine.fireAndForget(fnfMetadata, "fail-too", utf8);
          } catch (RuntimeException e) {
            thrown.add(e);
          }
          t.engine.requestResponse(null, "after", utf8, new RecordingListener());
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data).containsExactly("before", "after");
    assertThat(frames).allMatch(f -> f.type == FrameType.REQUEST_RESPONSE);
    assertThat(loop.call(() -> List.copyOf(failed.events)))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e)
                    .startsWith("error 0x" + Integer.toHexString(ErrorCode.INVALID))
                    .contains("could not be encoded", "cannot encode fail-now"));
    assertThat(thrown)
        .singleElement()
        .satisfies(e -> assertThat(e).hasMessageContaining("cannot encode fail-too"));
    assertThat(metadata.refCnt()).isZero();
    assertThat(fnfMetadata.refCnt()).isZero();
    assertThat(loop.call(() -> t.engine.activeStreams()))
        .as("the failed call is gone")
        .isEqualTo(2);
    assertThat(loop.call(() -> t.engine.isOpen())).isTrue();
  }

  @Test
  void fromAnotherThread_encodedOnTheLoop_inOrder_boundCountsTheEncodedLength() throws Exception {
    ScriptedTransport t = client(true, ConnectionConfig.builder().maxQueuedCallBytes(4096).build());
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    HandOffTest.blockLoop(loop, release);
    String kilobyte = "k".repeat(1000);
    List<String> accepted = new ArrayList<>();
    ByteBuf refusedMetadata = null;
    for (int i = 0; i < 10; i++) {
      ByteBuf metadata = Frames.utf8("m" + i);
      String value = i + kilobyte;
      try {
        if (i % 2 == 0) {
          t.engine.requestResponse(metadata, value, utf8, new RecordingListener());
        } else {
          t.engine.fireAndForget(metadata, value, utf8);
        }
        accepted.add(value);
      } catch (RejectedExecutionException e) {
        refusedMetadata = metadata;
        break;
      }
    }
    assertThat(utf8.encoded).as("nothing encoded off the loop").isZero();
    assertThat(utf8.intoBuffers).isZero();
    assertThat(accepted).hasSize(3); // 3 x (2 + 1001 + 64) fit in 4096, a fourth does not
    assertThat(refusedMetadata).isNotNull();
    assertThat(refusedMetadata.refCnt()).as("a refused call's metadata is released").isZero();
    release.countDown();
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data).containsExactlyElementsOf(accepted);
    assertThat(frames)
        .extracting(f -> f.type)
        .containsExactly(
            FrameType.REQUEST_RESPONSE, FrameType.REQUEST_FNF, FrameType.REQUEST_RESPONSE);
    assertThat(utf8.encoded).isEqualTo(3);
    assertThat(utf8.intoBuffers).isZero();
    assertThat(utf8.lastEncodedOn).isNotEqualTo(Thread.currentThread());
  }

  @Test
  void fromAnotherThread_onATransportThatDoesNotBatch_encodedOnTheCallersThread() {
    ScriptedTransport t = client(false, ConnectionConfig.DEFAULT);
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    t.engine.requestResponse(Frames.utf8("m"), "rr", utf8, new RecordingListener());
    t.engine.fireAndForget(null, "fnf", utf8);
    assertThat(utf8.intoBuffers).as("encoded at once, on this thread").isEqualTo(2);
    assertThat(utf8.lastEncodedOn).isEqualTo(Thread.currentThread());
    assertThat(t.take()).extracting(f -> f.data).containsExactly("rr", "fnf");
  }

  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void encoderThatThrowsAnError_failsThatRequest_doesNotLeaveItRegistered(boolean coalesce) {
    ScriptedTransport t = client(coalesce, ConnectionConfig.DEFAULT);
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    RecordingListener onLoop = new RecordingListener();
    RecordingListener handedOver = new RecordingListener();
    ByteBuf metadata = Frames.utf8("m");
    loop.run(() -> t.engine.requestResponse(metadata, "error-on-loop", utf8, onLoop));
    if (coalesce) { // handed over, encoded on the loop
      t.engine.requestStream(null, "error-handed-over", utf8, 3, handedOver);
      t.engine.fireAndForget(null, "error-fnf", utf8); // logged on the loop
    } else { // encoded at once, on this thread
      assertThatThrownBy(() -> t.engine.requestStream(null, "error-here", utf8, 3, handedOver))
          .isInstanceOf(AssertionError.class);
      handedOver.events.add("error: could not be encoded (thrown to the caller)");
    }
    t.engine.fireAndForget(null, "after", utf8);
    assertThat(t.take()).extracting(f -> f.data).containsExactly("after");
    assertThat(loop.call(() -> List.copyOf(onLoop.events)))
        .singleElement()
        .asString()
        .contains("could not be encoded");
    assertThat(loop.call(() -> List.copyOf(handedOver.events)))
        .singleElement()
        .asString()
        .contains("could not be encoded");
    assertThat(metadata.refCnt()).isZero();
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  /**
   * An encoder whose length throws a checked exception it does not declare (Kotlin, Lombok's
   * {@code @SneakyThrows}), off the loop, on either transport (the length is taken first on both):
   * the caller gets it and the metadata it handed over is released.
   */
  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void encoderThatThrowsACheckedExceptionUndeclared_offTheLoop_releasesTheMetadata(
      boolean coalesce) {
    ScriptedTransport t = client(coalesce, ConnectionConfig.DEFAULT);
    java.io.IOException gone = new java.io.IOException("the value's file was gone");
    io.millrace.core.PayloadEncoder<String> sneaky =
        new io.millrace.core.PayloadEncoder<>() {
          @Override
          public int length(String value) {
            return io.millrace.testing.Undeclared.thrown(gone);
          }

          @Override
          public void encode(String value, ByteBuf out, int index, int length) {}
        };
    ByteBuf metadata = Frames.utf8("m");
    assertThatThrownBy(
            () -> t.engine.requestResponse(metadata, "x", sneaky, new RecordingListener()))
        .isSameAs(gone);
    assertThat(metadata.refCnt()).isZero();
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  /**
   * The same from the encoding itself, on a transport that does not batch, where a request off the
   * loop is encoded at once into a buffer of its own: that buffer and the metadata are released.
   */
  @Test
  void encodingThatThrowsACheckedExceptionUndeclared_atOnce_releasesBothBuffers() {
    ScriptedTransport t = client(false, ConnectionConfig.DEFAULT);
    java.io.IOException gone = new java.io.IOException("the value's file was gone");
    java.util.List<ByteBuf> made = new java.util.ArrayList<>();
    io.millrace.core.PayloadEncoder<String> sneaky =
        new io.millrace.core.PayloadEncoder<>() {
          @Override
          public int length(String value) {
            return 4;
          }

          @Override
          public void encode(String value, ByteBuf out, int index, int length) {
            made.add(out);
            io.millrace.testing.Undeclared.thrown(gone);
          }
        };
    ByteBuf metadata = Frames.utf8("m");
    assertThatThrownBy(
            () -> t.engine.requestResponse(metadata, "x", sneaky, new RecordingListener()))
        .isSameAs(gone);
    assertThat(made).singleElement().extracting(ByteBuf::refCnt).isEqualTo(0);
    assertThat(metadata.refCnt()).isZero();
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  @Test
  void nullOrNegativeLength_refusedAtOnce_metadataReleased() {
    ScriptedTransport t = client(true, ConnectionConfig.DEFAULT);
    ByteBuf m1 = Frames.utf8("m");
    ByteBuf m2 = Frames.utf8("m");
    assertThatThrownBy(
            () -> t.engine.requestResponse(m1, null, new EncodedPayloadTest.Utf8(), null))
        .isInstanceOf(NullPointerException.class);
    io.millrace.core.PayloadEncoder<String> negative =
        new io.millrace.core.PayloadEncoder<>() {
          @Override
          public int length(String value) {
            return -1;
          }

          @Override
          public void encode(String value, ByteBuf out, int index, int length) {}
        };
    assertThatThrownBy(() -> t.engine.fireAndForget(m2, "x", negative))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("negative length");
    assertThat(m1.refCnt()).isZero();
    assertThat(m2.refCnt()).isZero();
  }

  @Test
  void fromAnotherThread_failingEncoder_failsTheStreamOnTheLoop() {
    ScriptedTransport t = client(true, ConnectionConfig.DEFAULT);
    RecordingListener failed = new RecordingListener();
    ByteBuf metadata = Frames.utf8("m");
    Stream stream =
        t.engine.requestResponse(metadata, "fail-later", new EncodedPayloadTest.Utf8(), failed);
    assertThat(t.take()).isEmpty();
    assertThat(loop.call(() -> List.copyOf(failed.events)))
        .singleElement()
        .satisfies(e -> assertThat(e).contains("could not be encoded"));
    assertThat(metadata.refCnt()).isZero();
    assertThat(loop.call(stream::isInboundDone)).isTrue();
  }

  @Test
  void refusedRequest_onAClosedConnection_releasesTheMetadata_andTellsTheListener() {
    ScriptedTransport t = client(true, ConnectionConfig.DEFAULT);
    loop.run(() -> t.engine.close());
    t.take();
    ByteBuf metadata = Frames.utf8("m");
    ByteBuf fnfMetadata = Frames.utf8("f");
    RecordingListener refused = new RecordingListener();
    EncodedPayloadTest.Utf8 utf8 = new EncodedPayloadTest.Utf8();
    loop.run(
        () -> {
          t.engine.requestStream(metadata, "late", utf8, 1, refused);
          assertThat(t.engine.fireAndForget(fnfMetadata, "late", utf8)).isFalse();
        });
    assertThat(loop.call(() -> List.copyOf(refused.events)))
        .singleElement()
        .asString()
        .startsWith("error");
    assertThat(metadata.refCnt()).isZero();
    assertThat(fnfMetadata.refCnt()).isZero();
    assertThat(utf8.encoded).isZero();
    assertThat(t.take()).noneMatch(f -> f.type == FrameType.REQUEST_STREAM);
  }

  @Test
  void initialRequestN_notPositive_isRefused_metadataReleased() {
    ScriptedTransport t = client(true, ConnectionConfig.DEFAULT);
    ByteBuf metadata = Frames.utf8("m");
    assertThatThrownBy(
            () ->
                t.engine.requestStream(
                    metadata, "x", new EncodedPayloadTest.Utf8(), 0, new RecordingListener()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(metadata.refCnt()).isZero();
  }
}
