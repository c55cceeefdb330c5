package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Payload data written by a {@link PayloadEncoder} straight into the outbound frame. */
class EncodedPayloadTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  /** Strings in UTF-8, counting the values it encoded. */
  static final class Utf8 implements PayloadEncoder<String> {
    volatile int encoded;
    volatile int intoBuffers;
    volatile Thread lastEncodedOn;

    @Override
    public ByteBuf toBuffer(String value, io.netty.buffer.ByteBufAllocator alloc) {
      intoBuffers++;
      return PayloadEncoder.super.toBuffer(value, alloc);
    }

    @Override
    public int length(String value) {
      return ByteBufUtil.utf8Bytes(value);
    }

    /** Calls of encodeAt, and of those the ones whose address was not the batch's. */
    volatile int encodedAt;

    volatile int wrongAddress;

    @Override
    public void encodeAt(String value, ByteBuf out, long address, int index, int length) {
      encodedAt++;
      if (address != (out.hasMemoryAddress() ? out.memoryAddress() : 0)) {
        wrongAddress++;
      }
      encode(value, out, index, length);
    }

    @Override
    public void encode(String value, ByteBuf out, int index, int length) {
      if (value.startsWith("fail")) {
        out.setByte(index, 'f'); // some bytes written, then a failure
        throw new IllegalStateException("cannot encode " + value);
      }
      if (value.startsWith("error")) {
        throw new AssertionError("cannot encode " + value);
      }
      if (value.startsWith("resize")) {
        out.capacity(out.capacity() * 4);
      }
      encoded++;
      lastEncodedOn = Thread.currentThread();
      byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
      assertThat(bytes.length).isEqualTo(length);
      out.setBytes(index, bytes);
    }
  }

  private ScriptedTransport server(
      boolean coalesce, ConnectionConfig config, AtomicReference<Stream> captured) {
    ScriptedTransport t = new ScriptedTransport(loop);
    t.coalesce = coalesce;
    t.engine =
        ConnectionEngine.server(
            t,
            config,
            (s, c) ->
                new Responder() {
                  @Override
                  public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
                    captured.set(stream);
                    return null;
                  }
                },
            null,
            null,
            t.timers);
    loop.run(() -> t.engine.start(null, null));
    t.inject(Frames.setup());
    return t;
  }

  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void encodedPayloads_arriveAsTheirBytes_withMetadata_smallAndLarge(boolean coalesce) {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = server(coalesce, ConnectionConfig.DEFAULT, stream);
    t.inject(Frames.requestStream(1, 100, "q"));
    Utf8 utf8 = new Utf8();
    String large = "é".repeat(10_000); // 20,000 bytes: beyond a batch's frame limit
    ByteBuf metadata = Frames.utf8("m");
    loop.run(
        () -> {
          stream.get().next(null, "small-1", utf8);
          stream.get().next(metadata, large, utf8);
          stream.get().next(null, "", utf8);
          stream.get().nextAndComplete(null, "last", utf8);
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.data).containsExactly("small-1", large, "", "last");
    assertThat(frames).extracting(f -> f.metadata).containsExactly(null, "m", null, null);
    assertThat(frames.get(3).has(FrameHeader.FLAG_COMPLETE)).isTrue();
    assertThat(frames.get(2).has(FrameHeader.FLAG_COMPLETE)).isFalse();
    assertThat(utf8.encoded).isEqualTo(4);
    // Into the batch through encodeAt, with the batch's address; the large one on its own.
    assertThat(utf8.encodedAt).isEqualTo(coalesce ? 3 : 0);
    assertThat(utf8.wrongAddress).isZero();
    assertThat(metadata.refCnt()).isZero();
  }

  @Test
  void encodedPayload_beyondTheFragmentSize_isFragmentedAndReassembles() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = server(true, ConnectionConfig.builder().fragmentSize(64).build(), stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    String text = "0123456789".repeat(30);
    loop.run(() -> stream.get().next(Frames.utf8("meta"), text, new Utf8()));
    List<WireFrame> frames = t.take();
    assertThat(frames.size()).isGreaterThan(4);
    assertThat(frames.get(0).has(FrameHeader.FLAG_FOLLOWS)).isTrue();
    assertThat(reassembled(frames)).containsExactly("meta", text);
    assertThat(frames.get(frames.size() - 1).has(FrameHeader.FLAG_FOLLOWS)).isFalse();
  }

  @ParameterizedTest(name = "batched transport: {0}")
  @ValueSource(booleans = {true, false})
  void encoderThatFails_failsTheStreamOnly_framesAroundItIntact_metadataReleased(boolean coalesce) {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = server(coalesce, ConnectionConfig.DEFAULT, stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    Stream first = loop.call(stream::get);
    t.inject(Frames.requestStream(3, 10, "q"));
    ByteBuf metadata = Frames.utf8("m");
    Utf8 utf8 = new Utf8();
    loop.run(
        () -> {
          first.next(null, "before", utf8);
          first.next(metadata, "fail-now", utf8);
          first.next(null, "after", utf8); // the stream has ended: dropped
        });
    List<WireFrame> frames = t.take();
    assertThat(frames).extracting(f -> f.type).containsExactly(FrameType.PAYLOAD, FrameType.ERROR);
    assertThat(frames.get(0).data).isEqualTo("before");
    assertThat(frames.get(1).streamId).isEqualTo(1);
    assertThat(frames.get(1).errorCode).isEqualTo(ErrorCode.APPLICATION_ERROR);
    assertThat(metadata.refCnt()).isZero();
    // The connection goes on: the other stream still sends.
    loop.run(() -> stream.get().next(null, "other", utf8));
    assertThat(t.take()).extracting(f -> f.data).containsExactly("other");
    assertThat(loop.call(() -> t.engine.isOpen())).isTrue();
  }

  @Test
  void encoderThatResizesTheBatch_failsItsStream_andLaterFramesGoToTheBatchsNewMemory() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = server(true, ConnectionConfig.DEFAULT, stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    Stream first = loop.call(stream::get);
    t.inject(Frames.requestStream(3, 1000, "q"));
    Utf8 utf8 = new Utf8();
    // "resize-" grows the buffer it was told to write into in place, against the contract: the
    // batch's memory moves (the allocator's direct buffers have addresses, written to raw).
    loop.run(
        () -> {
          first.next(null, "before", utf8);
          first.next(null, "resize-me", utf8);
          for (int i = 0; i < 200; i++) { // enough to fill the batch's old memory many times over
            stream.get().next(null, "after-" + i, utf8);
          }
        });
    List<WireFrame> frames = t.take();
    assertThat(frames.get(0).data).isEqualTo("before");
    assertThat(frames.get(1).type).isEqualTo(FrameType.ERROR);
    assertThat(frames.get(1).streamId).isEqualTo(1);
    assertThat(frames.subList(2, frames.size()))
        .extracting(f -> f.data)
        .containsExactlyElementsOf(
            java.util.stream.IntStream.range(0, 200).mapToObj(i -> "after-" + i).toList());
    assertThat(loop.call(() -> t.engine.isOpen())).isTrue();
  }

  /** The metadata and the data of fragments, each joined in order. */
  static List<String> reassembled(List<WireFrame> frames) {
    StringBuilder data = new StringBuilder();
    StringBuilder meta = new StringBuilder();
    for (WireFrame f : frames) {
      data.append(f.data == null ? "" : f.data);
      meta.append(f.metadata == null ? "" : f.metadata);
    }
    return List.of(meta.toString(), data.toString());
  }

  @Test
  void streamWithoutEncodingSupport_getsTheValueInABufferOfItsOwn() {
    AtomicReference<Stream> stream = new AtomicReference<>();
    ScriptedTransport t = server(true, ConnectionConfig.DEFAULT, stream);
    t.inject(Frames.requestStream(1, 10, "q"));
    Stream real = loop.call(stream::get);
    // A Stream that only implements the buffer methods, delegating them: the interface's default
    // encodes into a buffer first.
    Stream plain =
        (Stream)
            java.lang.reflect.Proxy.newProxyInstance(
                Stream.class.getClassLoader(),
                new Class<?>[] {Stream.class},
                (proxy, method, args) -> {
                  if (method.isDefault()) {
                    return java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args);
                  }
                  return method.invoke(real, args);
                });
    loop.run(() -> plain.next(null, "via a buffer", new Utf8()));
    assertThat(t.take()).extracting(f -> f.data).containsExactly("via a buffer");
  }
}
