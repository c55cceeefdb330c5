package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

class ProtobufMarshallerTest {
  private static final ProtobufMarshaller<Struct> STRUCT =
      ProtobufMarshaller.of(Struct.getDefaultInstance());
  private static final ProtobufMarshaller<BytesValue> BYTES =
      ProtobufMarshaller.of(BytesValue.getDefaultInstance());

  private static final Struct MESSAGE =
      Struct.newBuilder()
          .putFields("name", Value.newBuilder().setStringValue("millrace ü").build())
          .putFields("n", Value.newBuilder().setNumberValue(42).build())
          .build();

  @Test
  void roundTrips_throughDirectHeapAndCompositeBuffers() {
    for (ByteBufAllocator alloc :
        new ByteBufAllocator[] {
          PooledByteBufAllocator.DEFAULT,
          new UnpooledByteBufAllocator(false),
          ByteBufAllocator.DEFAULT
        }) {
      ByteBuf out = STRUCT.serialize(MESSAGE, alloc);
      try {
        assertThat(out.readableBytes()).isEqualTo(MESSAGE.getSerializedSize());
        assertThat(out.capacity()).as("sized exactly").isEqualTo(MESSAGE.getSerializedSize());
        assertThat(STRUCT.parse(out)).isEqualTo(MESSAGE);
        assertThat(out.readerIndex()).isZero();
        CompositeByteBuf split = Unpooled.compositeBuffer();
        int half = out.readableBytes() / 2;
        split.addComponents(
            true, out.retainedSlice(0, half), out.retainedSlice(half, out.readableBytes() - half));
        try {
          assertThat(STRUCT.parse(split)).isEqualTo(MESSAGE);
        } finally {
          split.release();
        }
      } finally {
        out.release();
      }
    }
  }

  @Test
  void theDefaultMessage_isZeroBytes_andParsesFromNothing() {
    ByteBuf out = STRUCT.serialize(Struct.getDefaultInstance(), ByteBufAllocator.DEFAULT);
    try {
      assertThat(out.readableBytes()).isZero();
      assertThat(STRUCT.parse(out)).isEqualTo(Struct.getDefaultInstance());
    } finally {
      out.release();
    }
  }

  @Test
  void aParsedBytesField_doesNotPointIntoTheReleasedBuffer() {
    BytesValue value = BytesValue.of(ByteString.copyFromUtf8("payload"));
    ByteBuf out = BYTES.serialize(value, PooledByteBufAllocator.DEFAULT);
    BytesValue parsed;
    try {
      parsed = BYTES.parse(out);
      out.setZero(0, out.readableBytes()); // the memory is reused after release
    } finally {
      out.release();
    }
    assertThat(parsed.getValue().toStringUtf8()).isEqualTo("payload");
  }

  @Test
  void invalidBytes_failWithInternal() {
    ByteBuf garbage = Unpooled.wrappedBuffer(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
    assertThatThrownBy(() -> STRUCT.parse(garbage))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL);
              assertThat(e.getMessage()).contains("invalid protobuf message");
            });
  }
}
