package io.millrace.streams;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A received payload's heap copy is wrapped in a buffer only when the buffer is asked for. */
class PayloadTest {

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
}
