package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.lang.reflect.Proxy;
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

  /**
   * A long bytes field (around 256 bytes, and past the 4 KiB the scratch arrays take) keeps its
   * value after the received buffer is overwritten and released, on a Netty thread and off one,
   * from native and composite buffers.
   */
  @Test
  void aLongBytesField_keepsItsValue_afterTheReceivedBufferIsReused() throws Exception {
    ThrowingRunnable check =
        () -> {
          for (int size : new int[] {254, 255, 256, 300, 70_000}) {
            byte[] bytes = new byte[size];
            new java.util.Random(size).nextBytes(bytes);
            BytesValue value = BytesValue.of(ByteString.copyFrom(bytes));
            ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(BYTES.length(value));
            BytesValue parsed;
            BytesValue parsedFromParts;
            try {
              BYTES.encode(value, out, 0, BYTES.length(value));
              out.writerIndex(BYTES.length(value));
              parsed = BYTES.parse(out);
              CompositeByteBuf split = Unpooled.compositeBuffer();
              split.addComponents(
                  true,
                  out.retainedSlice(0, 100),
                  out.retainedSlice(100, out.readableBytes() - 100));
              try {
                parsedFromParts = BYTES.parse(split);
              } finally {
                split.release();
              }
              out.setZero(0, out.readableBytes()); // the memory is reused after release
            } finally {
              out.release();
            }
            assertThat(parsed.getValue().toByteArray()).as("size %d", size).isEqualTo(bytes);
            assertThat(parsedFromParts.getValue().toByteArray()).isEqualTo(bytes);
          }
        };
    check.run();
    onNettyThread(check);
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

  /** Runs {@code body} on a Netty thread, where the marshaller reuses its scratch coders. */
  private static void onNettyThread(ThrowingRunnable body) throws Exception {
    java.util.concurrent.atomic.AtomicReference<Throwable> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread t =
        new io.netty.util.concurrent.FastThreadLocalThread(
            () -> {
              try {
                body.run();
              } catch (Throwable e) {
                failure.set(e);
              }
            });
    t.start();
    t.join(30_000);
    assertThat(t.isAlive()).isFalse();
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void manyMessagesOfEverySize_roundTripThroughTheReusedCoders_pastABadOne() throws Exception {
    onNettyThread(
        () -> {
          java.util.Random random = new java.util.Random(7);
          // 2,000 messages of 0 to 5,000 bytes: the 64 KiB scratch arrays are used up many times,
          // messages above 4 KiB take the other path, and each parse follows the last one's bytes.
          for (int i = 0; i < 2_000; i++) {
            byte[] bytes = new byte[random.nextInt(5_000)];
            random.nextBytes(bytes);
            BytesValue value = BytesValue.of(ByteString.copyFrom(bytes));
            ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer(16 + bytes.length + 8);
            try {
              frame.writerIndex(16); // encoded behind other bytes, as into a frame batch
              int length = BYTES.length(value);
              if (i % 2 == 0) {
                BYTES.encode(value, frame, 16, length);
              } else { // as the frame writer encodes into its batch
                BYTES.encodeAt(value, frame, frame.memoryAddress(), 16, length);
              }
              frame.writerIndex(16 + length);
              frame.readerIndex(16);
              assertThat(BYTES.parse(frame)).isEqualTo(value);
            } finally {
              frame.release();
            }
            if (i % 100 == 50) {
              // A truncated message (a length prefix with too few bytes) fails alone.
              ByteBuf bad = Unpooled.directBuffer(3).writeByte(0x0A).writeByte(100).writeByte(1);
              try {
                assertThatThrownBy(() -> BYTES.parse(bad)).isInstanceOf(StatusException.class);
              } finally {
                bad.release();
              }
            }
          }
        });
  }

  @Test
  void messagesParsedOneAfterAnother_shareNothing_andStartEmpty() throws Exception {
    // A Netty thread parses a run of one type with one builder: each message must come out as
    // sent, without fields of the one before it, and must not change when later ones are parsed.
    onNettyThread(
        () -> {
          java.util.List<Object> sent = new java.util.ArrayList<>();
          java.util.List<Object> parsed = new java.util.ArrayList<>();
          for (int i = 0; i < 200; i++) {
            Struct.Builder struct = Struct.newBuilder();
            for (int f = 0; f < i % 4; f++) { // 0 to 3 map entries, so some messages are empty
              struct.putFields(
                  "k" + f + "-" + i,
                  Value.newBuilder()
                      .setListValue(
                          com.google.protobuf.ListValue.newBuilder()
                              .addValues(Value.newBuilder().setNumberValue(i))
                              .addValues(Value.newBuilder().setStringValue("v" + i)))
                      .build());
            }
            Struct message = struct.build();
            sent.add(message);
            parsed.add(roundTrip(STRUCT, message));
            if (i % 7 == 3) { // another type between two of the run
              BytesValue other = BytesValue.of(ByteString.copyFromUtf8("other " + i));
              sent.add(other);
              parsed.add(roundTrip(BYTES, other));
            }
          }
          assertThat(parsed).isEqualTo(sent);
        });
  }

  @Test
  void dynamicMessages_doNotKeepTheOneofOfTheMessageBefore() throws Exception {
    // DynamicMessage's builder clear() keeps its oneof cases: such messages take their parser.
    com.google.protobuf.Descriptors.Descriptor type = Value.getDescriptor();
    com.google.protobuf.Descriptors.OneofDescriptor kind = type.getOneofs().get(0);
    ProtobufMarshaller<com.google.protobuf.DynamicMessage> dynamic =
        ProtobufMarshaller.of(com.google.protobuf.DynamicMessage.getDefaultInstance(type));
    com.google.protobuf.DynamicMessage number =
        com.google.protobuf.DynamicMessage.newBuilder(type)
            .setField(type.findFieldByName("number_value"), 4.0)
            .build();
    com.google.protobuf.DynamicMessage empty =
        com.google.protobuf.DynamicMessage.newBuilder(type)
            .setUnknownFields(
                com.google.protobuf.UnknownFieldSet.newBuilder()
                    .addField(
                        99,
                        com.google.protobuf.UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                    .build())
            .build(); // not zero bytes, so that it is parsed
    onNettyThread(
        () -> {
          assertThat(roundTrip(dynamic, number).hasOneof(kind)).isTrue();
          com.google.protobuf.DynamicMessage parsed = roundTrip(dynamic, empty);
          assertThat(parsed.hasOneof(kind)).isFalse();
          assertThat(parsed).isEqualTo(empty);
        });
  }

  /** Encodes {@code value} into a direct buffer and parses it back (the scratch path). */
  private static <T extends com.google.protobuf.MessageLite> T roundTrip(
      ProtobufMarshaller<T> marshaller, T value) {
    int length = marshaller.length(value);
    ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer(length + 8);
    try {
      marshaller.encode(value, frame, 0, length);
      frame.writerIndex(length);
      return marshaller.parse(frame);
    } finally {
      frame.release();
    }
  }

  @Test
  void aMessageMissingRequiredFields_isRejectedOnEveryPath() throws Exception {
    // proto2's NamePart requires name_part and is_extension; no bytes set neither.
    ProtobufMarshaller<com.google.protobuf.DescriptorProtos.UninterpretedOption.NamePart> parts =
        ProtobufMarshaller.of(
            com.google.protobuf.DescriptorProtos.UninterpretedOption.NamePart.getDefaultInstance());
    byte[] onlyName = {0x0A, 0x01, 'x'}; // name_part = "x", is_extension missing
    ThrowingRunnable check =
        () -> {
          for (ByteBuf bytes :
              new ByteBuf[] {
                Unpooled.EMPTY_BUFFER,
                Unpooled.directBuffer(3).writeBytes(onlyName),
                Unpooled.wrappedBuffer(onlyName)
              }) {
            try {
              assertThatThrownBy(() -> parts.parse(bytes))
                  .isInstanceOfSatisfying(
                      StatusException.class,
                      e -> assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL));
            } finally {
              bytes.release();
            }
          }
        };
    check.run();
    onNettyThread(check);
  }

  @Test
  void aStrayEndGroupTag_isRejectedOnTheReusedDecoderToo() throws Exception {
    onNettyThread(
        () -> {
          // Field 1 as an end-group tag (wire type 4): valid bytes for no message.
          ByteBuf bad = Unpooled.directBuffer(1).writeByte(0x0C);
          try {
            assertThatThrownBy(() -> STRUCT.parse(bad)).isInstanceOf(StatusException.class);
          } finally {
            bad.release();
          }
          ByteBuf good = STRUCT.serialize(MESSAGE, PooledByteBufAllocator.DEFAULT);
          try {
            assertThat(STRUCT.parse(good)).isEqualTo(MESSAGE);
          } finally {
            good.release();
          }
        });
  }

  @Test
  void aParseThatFailsAfterSettingAField_leavesNothingOfItForTheNextMessage() throws Exception {
    onNettyThread(
        () -> {
          // Field 1 = "x", then field 1 again with a length past the end: the builder has set the
          // value when the parse fails.
          ByteBuf bad = Unpooled.directBuffer(5).writeBytes(new byte[] {0x0A, 1, 'x', 0x0A, 100});
          ByteBuf unknownOnly = Unpooled.directBuffer(2).writeBytes(new byte[] {0x10, 1});
          try {
            assertThatThrownBy(() -> BYTES.parse(bad)).isInstanceOf(StatusException.class);
            assertThat(BYTES.parse(unknownOnly).getValue()).isEmpty();
          } finally {
            bad.release();
            unknownOnly.release();
          }
        });
  }

  @Test
  void aWriteThatComesOutLongerThanSaid_failsAlone() throws Exception {
    onNettyThread(
        () -> {
          BytesValue value = BytesValue.of(ByteString.copyFromUtf8("millrace"));
          int length = BYTES.length(value);
          ByteBuf frame = Unpooled.directBuffer(64);
          try {
            assertThatThrownBy(() -> BYTES.encode(value, frame, 0, length + 1))
                .isInstanceOf(StatusException.class);
            assertThatThrownBy(
                    () -> BYTES.encodeAt(value, frame, frame.memoryAddress(), 0, length + 1))
                .isInstanceOf(StatusException.class);
            BYTES.encode(value, frame, 0, length);
            frame.writerIndex(length);
            assertThat(BYTES.parse(frame)).isEqualTo(value);
          } finally {
            frame.release();
          }
        });
  }

  @Test
  void aMessageWhoseParserCallsTheMarshallerAgain_isReadWhole() throws Exception {
    // A hand-written message type whose parser reads field 1 (an embedded BytesValue) through a
    // marshaller from a direct buffer, then field 2 (a varint): the inner parse must not use the
    // decoder the outer message is still being read from.
    long[] seen = new long[1];
    BytesValue[] inner = new BytesValue[1];
    MessageLite[] outer = new MessageLite[1];
    Parser<MessageLite> parser =
        parser(
            in -> {
              assertThat(in.readTag()).isEqualTo(0x0A);
              ByteString nested = in.readBytes();
              ByteBuf direct =
                  Unpooled.directBuffer(nested.size()).writeBytes(nested.toByteArray());
              try {
                inner[0] = BYTES.parse(direct);
              } finally {
                direct.release();
              }
              assertThat(in.readTag()).isEqualTo(0x10);
              seen[0] = in.readInt64();
              assertThat(in.readTag()).isZero();
              return outer[0];
            });
    outer[0] = message(parser);
    ProtobufMarshaller<MessageLite> marshaller = ProtobufMarshaller.of(outer[0]);
    BytesValue value = BytesValue.of(ByteString.copyFromUtf8("inner bytes"));
    ByteBuf bytes = Unpooled.directBuffer();
    bytes.writeByte(0x0A).writeByte(value.getSerializedSize()).writeBytes(value.toByteArray());
    bytes.writeByte(0x10).writeByte(0x7F);
    try {
      onNettyThread(
          () -> {
            for (int i = 0; i < 3; i++) { // the first from a fresh decoder, then from a used one
              seen[0] = 0;
              assertThat(marshaller.parse(bytes)).isSameAs(outer[0]);
              assertThat(inner[0]).isEqualTo(value);
              assertThat(seen[0]).isEqualTo(0x7F);
            }
          });
    } finally {
      bytes.release();
    }
  }

  interface Reading {
    MessageLite read(CodedInputStream in) throws IOException;
  }

  /** A Parser whose one method the marshaller calls ({@code parsePartialFrom} of a stream). */
  @SuppressWarnings("unchecked")
  private static Parser<MessageLite> parser(Reading reading) {
    return (Parser<MessageLite>)
        Proxy.newProxyInstance(
            Parser.class.getClassLoader(),
            new Class<?>[] {Parser.class},
            (proxy, method, args) -> {
              if (method.getName().equals("parsePartialFrom")
                  && args.length == 2
                  && args[0] instanceof CodedInputStream in) {
                return reading.read(in);
              }
              throw new UnsupportedOperationException(method.toString());
            });
  }

  /** A message that only tells its parser and that it is initialized. */
  private static MessageLite message(Parser<MessageLite> parser) {
    return (MessageLite)
        Proxy.newProxyInstance(
            MessageLite.class.getClassLoader(),
            new Class<?>[] {MessageLite.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getParserForType" -> parser;
                  case "isInitialized" -> true;
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> throw new UnsupportedOperationException(method.toString());
                });
  }
}
