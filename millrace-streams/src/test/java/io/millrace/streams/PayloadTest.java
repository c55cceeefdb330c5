package io.millrace.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A received payload's heap copy is wrapped in a buffer only when the buffer is asked for; an
 * encoded payload is encoded only when its bytes are; a lent one never releases its owner's
 * buffers.
 */
class PayloadTest {

  @Test
  void length_countsMetadataAndData_inEveryForm() {
    assertThat(Payload.of("abc").length()).isEqualTo(3);
    assertThat(Payload.of("mm", "abc").length()).isEqualTo(5);
    assertThat(Payload.received(null, new byte[7]).length()).isEqualTo(7);
    assertThat(Payload.empty().length()).isZero();
    Payload encoded =
        Payload.encoded(
            Unpooled.wrappedBuffer(new byte[2]),
            "four",
            new io.millrace.core.PayloadEncoder<String>() {
              @Override
              public int length(String value) {
                return value.length();
              }

              @Override
              public void encode(String value, ByteBuf out, int index, int length) {}
            });
    assertThat(encoded.length()).isEqualTo(6);
    encoded.release();
  }

  @Test
  void aLentPayloadWhoseDataIsGone_failsToBeSent_withoutKeepingItsOwnersMetadata() {
    ByteBuf metadata = Unpooled.copiedBuffer("m", StandardCharsets.UTF_8);
    ByteBuf data = Unpooled.copiedBuffer("d", StandardCharsets.UTF_8);
    data.release(); // the owner's data is gone, its metadata is not
    io.millrace.core.Stream stream =
        (io.millrace.core.Stream)
            java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {io.millrace.core.Stream.class},
                (proxy, method, args) -> {
                  throw new AssertionError("nothing reaches the stream: " + method.getName());
                });
    assertThatThrownBy(() -> Payload.lent(metadata, data).sendOn(stream))
        .isInstanceOf(io.netty.util.IllegalReferenceCountException.class);
    assertThat(metadata.refCnt()).as("the reference taken for the send was given back").isOne();
    metadata.release();
  }

  @Test
  void aReceivedCopyReadsWithoutABufferAndWrapsOnceWhenAsked() {
    byte[] bytes = "héllo".getBytes(StandardCharsets.UTF_8);
    Payload p = Payload.received(null, bytes);
    assertThat(p.dataUtf8()).isEqualTo("héllo");
    assertThat(p.dataBytes()).isEqualTo(bytes).isNotSameAs(bytes);
    assertThat(p.toString()).contains("data=6 B");
    ByteBuf data = p.data();
    assertThat(p.data()).isSameAs(data); // one buffer, whoever asks
    assertThat(data.readableBytes()).isEqualTo(6);
    data.readByte(); // once wrapped, the buffer is the data: reads move it
    assertThat(p.dataUtf8()).isEqualTo("éllo");
    p.release();
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void releaseBeforeTheBufferWasAskedForIsANoOpAndRetainMakesIt() {
    Payload unread = Payload.received(Unpooled.wrappedBuffer(new byte[] {1}), new byte[] {2, 3});
    ByteBuf metadata = unread.metadata();
    unread.release(); // nothing wrapped the data; the metadata is released
    assertThat(metadata.refCnt()).isZero();

    Payload kept = Payload.received(null, new byte[] {4}).retain();
    assertThat(kept.data().refCnt()).isEqualTo(2);
    kept.release();
    kept.release();
    assertThat(kept.data().refCnt()).isZero();
  }

  @Test
  void anEmptyArrayIsTheEmptyBuffer() {
    assertThat(Payload.received(null, new byte[0]).data()).isSameAs(Unpooled.EMPTY_BUFFER);
  }

  /** Strings in UTF-8, counting what it encoded. */
  static final class Utf8Encoder implements io.millrace.core.PayloadEncoder<String> {
    final AtomicInteger encoded = new AtomicInteger();

    @Override
    public int length(String value) {
      return value.getBytes(StandardCharsets.UTF_8).length;
    }

    /** Values encoded into a buffer of their own, not straight into a frame. */
    final AtomicInteger intoBuffers = new AtomicInteger();

    @Override
    public void encode(String value, ByteBuf out, int index, int length) {
      encoded.incrementAndGet();
      out.setBytes(index, value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public ByteBuf toBuffer(String value, io.netty.buffer.ByteBufAllocator alloc) {
      intoBuffers.incrementAndGet();
      return io.millrace.core.PayloadEncoder.super.toBuffer(value, alloc);
    }
  }

  @Test
  void anEncodedPayloadEncodesOnlyWhenItsBytesAreAskedFor() {
    Utf8Encoder utf8 = new Utf8Encoder();
    Payload p = Payload.encoded(Unpooled.copiedBuffer("m", StandardCharsets.UTF_8), "héllo", utf8);
    assertThat(p.toString()).contains("data=6 B");
    assertThat(utf8.encoded).hasValue(0);
    assertThat(p.dataUtf8()).isEqualTo("héllo");
    assertThat(p.dataUtf8()).isEqualTo("héllo");
    assertThat(utf8.encoded).hasValue(1); // encoded once, kept as its buffer
    ByteBuf data = p.data();
    ByteBuf metadata = p.metadata();
    p.release();
    assertThat(data.refCnt()).isZero();
    assertThat(metadata.refCnt()).isZero();

    Payload dropped = Payload.encoded(null, "never sent", utf8);
    dropped.release(); // nothing was encoded, nothing to release
    assertThat(utf8.encoded).hasValue(1);
    assertThatThrownBy(dropped::data)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("released");
  }

  @Test
  void anEncodedByteArrayIsAValueForItsEncoder_notAReceivedCopy() {
    // A received copy and an encoded value share one field: the encoder tells them apart.
    io.millrace.core.PayloadEncoder<byte[]> twice =
        new io.millrace.core.PayloadEncoder<>() {
          @Override
          public int length(byte[] value) {
            return 2 * value.length;
          }

          @Override
          public void encode(byte[] value, ByteBuf out, int index, int length) {
            out.setBytes(index, value);
            out.setBytes(index + value.length, value);
          }
        };
    byte[] ab = "ab".getBytes(StandardCharsets.UTF_8);
    Payload p = Payload.encoded(null, ab, twice);
    assertThat(p.toString()).contains("data=4 B");
    assertThat(p.dataUtf8()).isEqualTo("abab");
    p.release();

    Payload dropped = Payload.encoded(null, ab, twice);
    dropped.release();
    assertThatThrownBy(dropped::dataUtf8).isInstanceOf(IllegalStateException.class);

    Payload received = Payload.received(null, ab);
    received.release(); // a heap copy stays readable: nothing of it was released
    assertThat(received.dataUtf8()).isEqualTo("ab");
    assertThat(received.toString()).contains("data=2 B");
  }

  @Test
  void aLentPayloadReadsItsOwnersBuffersAndNeitherReleasesNorKeepsThem() {
    ByteBuf data = Unpooled.copiedBuffer("lent", StandardCharsets.UTF_8);
    Payload p = Payload.lent(null, data);
    assertThat(p.dataUtf8()).isEqualTo("lent");
    p.release();
    assertThat(data.refCnt()).isEqualTo(1); // still its owner's
    assertThatThrownBy(p::retain).isInstanceOf(IllegalStateException.class);
    assertThat(data.refCnt()).isEqualTo(1);
    data.release();
  }
}
