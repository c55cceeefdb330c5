package io.millrace.rpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.util.concurrent.FastThreadLocal;
import java.io.IOException;

/**
 * Protobuf messages straight into and out of Netty buffers: a message is written once, into a
 * pooled buffer of exactly its size (through protobuf's direct-buffer encoder when the buffer is
 * direct), and parsed from the received buffer in place (protobuf copies the fields it keeps, never
 * the whole payload first). Bytes fields are copied out, so a parsed message never points into a
 * buffer that is released after the call.
 */
public final class ProtobufMarshaller<T extends MessageLite> implements Marshaller<T> {
  private final T defaultInstance;
  private final Parser<T> parser;

  @SuppressWarnings("unchecked")
  private ProtobufMarshaller(T defaultInstance) {
    this.defaultInstance = defaultInstance;
    this.parser = (Parser<T>) defaultInstance.getParserForType();
  }

  /** The message type's default instance (for tools that build messages by type, as JSON). */
  public T defaultInstance() {
    return defaultInstance;
  }

  /**
   * The marshaller of {@code defaultInstance}'s type (such as {@code
   * EchoRequest.getDefaultInstance()}).
   */
  public static <T extends MessageLite> ProtobufMarshaller<T> of(T defaultInstance) {
    return new ProtobufMarshaller<>(defaultInstance);
  }

  @Override
  public ByteBuf serialize(T value, ByteBufAllocator alloc) {
    int size = value.getSerializedSize();
    ByteBuf out = alloc.buffer(size, size);
    try {
      if (size > 0 && size <= SCRATCH_BYTES && !out.hasArray()) {
        // Small messages: protobuf's array encoder into the thread's scratch array, then one copy
        // (a direct buffer would cost two NIO views and the direct encoder per message).
        byte[] scratch = SCRATCH.get();
        CodedOutputStream coded = CodedOutputStream.newInstance(scratch, 0, size);
        value.writeTo(coded);
        coded.checkNoSpaceLeft();
        out.writeBytes(scratch, 0, size);
      } else if (size > 0) {
        CodedOutputStream coded =
            out.hasArray()
                ? CodedOutputStream.newInstance(out.array(), out.arrayOffset(), size)
                : CodedOutputStream.newInstance(out.internalNioBuffer(0, size));
        value.writeTo(coded);
        coded.checkNoSpaceLeft();
        out.writerIndex(size);
      }
      return out;
    } catch (IOException | RuntimeException e) {
      out.release();
      throw Status.INTERNAL.withMessage("could not serialize a message").withCause(e).asException();
    }
  }

  /** Messages up to this size are parsed from a per-thread copy: protobuf's fastest decoder. */
  private static final int SCRATCH_BYTES = 4096;

  private static final FastThreadLocal<byte[]> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
          return new byte[SCRATCH_BYTES];
        }
      };

  @Override
  public T parse(ByteBuf data) {
    try {
      int length = data.readableBytes();
      if (length == 0) {
        return parser.parseFrom(CodedInputStream.newInstance(new byte[0]));
      }
      if (!data.hasArray() && length <= SCRATCH_BYTES) {
        // A received frame's bytes: one copy into the thread's scratch array beats a NIO view and
        // the direct decoder for small messages; protobuf copies what it keeps, so the array is
        // free again once this returns.
        byte[] scratch = SCRATCH.get();
        data.getBytes(data.readerIndex(), scratch, 0, length);
        return parser.parseFrom(scratch, 0, length);
      }
      if (data.hasArray()) {
        return parser.parseFrom(
            data.array(), data.arrayOffset() + data.readerIndex(), data.readableBytes());
      }
      if (data.nioBufferCount() == 1) {
        CodedInputStream in =
            CodedInputStream.newInstance(data.nioBuffer(data.readerIndex(), data.readableBytes()));
        T value = parser.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
        in.checkLastTagWas(0); // as the array and stream paths check: no stray end-group tag
        return value;
      }
      return parser.parseFrom(new ByteBufInputStream(data.duplicate()));
    } catch (InvalidProtocolBufferException e) {
      throw Status.INTERNAL
          .withMessage("invalid protobuf message: " + e.getMessage())
          .withCause(e)
          .asException();
    }
  }
}
