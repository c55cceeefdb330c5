package io.millrace.grpc;

import com.google.protobuf.MessageLite;
import io.grpc.protobuf.lite.ProtoLiteUtils;
import io.millrace.rpc.Marshaller;
import io.millrace.rpc.ProtobufMarshaller;
import io.millrace.rpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Message marshallers across the bridge. */
final class Marshallers {
  private Marshallers() {}

  /**
   * {@code m} as gRPC's: a protobuf message goes through grpc-java's own protobuf marshaller (what
   * its generated code uses, with its zero-copy paths); any other marshaller through a buffer.
   */
  @SuppressWarnings("unchecked")
  static <T> io.grpc.MethodDescriptor.Marshaller<T> toGrpc(Marshaller<T> m) {
    if (m instanceof ProtobufMarshaller<?> p) {
      return (io.grpc.MethodDescriptor.Marshaller<T>)
          ProtoLiteUtils.marshaller(p.defaultInstance());
    }
    return new BufferMarshaller<>(m);
  }

  /** A Millrace marshaller as gRPC's, through a byte array per message. */
  private static final class BufferMarshaller<T> implements io.grpc.MethodDescriptor.Marshaller<T> {
    private final Marshaller<T> m;

    BufferMarshaller(Marshaller<T> m) {
      this.m = m;
    }

    @Override
    public InputStream stream(T value) {
      // An array, not the buffer: gRPC does not always close the streams it reads.
      ByteBuf buf = m.serialize(value, UnpooledByteBufAllocator.DEFAULT);
      try {
        return new ByteArrayInputStream(ByteBufUtil.getBytes(buf));
      } finally {
        buf.release();
      }
    }

    @Override
    public T parse(InputStream stream) {
      byte[] bytes;
      try {
        bytes = stream.readAllBytes();
      } catch (IOException e) {
        throw io.grpc.Status.INTERNAL
            .withDescription("the message could not be read")
            .withCause(e)
            .asRuntimeException();
      }
      try {
        return m.parse(io.netty.buffer.Unpooled.wrappedBuffer(bytes));
      } catch (io.millrace.rpc.StatusException e) {
        throw GrpcMetadata.toGrpc(e.status()).asRuntimeException();
      }
    }
  }

  /**
   * gRPC's {@code m} as Millrace's. grpc-java's protobuf marshaller (what its generated code uses)
   * becomes Millrace's, which writes messages straight into the frame and parses them in place; any
   * other goes through the stream gRPC gives, and is parsed from a stream over the received buffer.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static <T> Marshaller<T> fromGrpc(io.grpc.MethodDescriptor.Marshaller<T> m) {
    if (m instanceof io.grpc.MethodDescriptor.PrototypeMarshaller<T> p
        && p.getMessagePrototype() instanceof MessageLite prototype
        && m.getClass().getName().startsWith("io.grpc.protobuf.")) {
      return (Marshaller) ProtobufMarshaller.of(prototype.getDefaultInstanceForType());
    }
    return new Marshaller<>() {
      @Override
      public ByteBuf serialize(T value, io.netty.buffer.ByteBufAllocator alloc) {
        ByteBuf out = null;
        try (InputStream in = m.stream(value)) {
          int known = in instanceof io.grpc.KnownLength k ? k.available() : 256;
          out = alloc.buffer(Math.max(known, 16));
          while (out.writeBytes(in, Math.max(out.writableBytes(), 256)) > 0) {
            // until the stream ends
          }
          return out;
        } catch (IOException | RuntimeException e) {
          if (out != null) {
            out.release();
          }
          throw Status.INTERNAL
              .withMessage("a message could not be serialized: " + e)
              .withCause(e)
              .asException();
        }
      }

      @Override
      public T parse(ByteBuf data) {
        // Its own bytes: a marshaller may keep the stream (lazy parsing), and the buffer is
        // released
        // when this returns.
        try (InputStream in = new ByteArrayInputStream(ByteBufUtil.getBytes(data))) {
          return m.parse(in);
        } catch (io.grpc.StatusRuntimeException e) {
          throw GrpcMetadata.fromGrpc(e.getStatus(), e.getTrailers()).asException();
        } catch (IOException | RuntimeException e) {
          throw Status.INTERNAL
              .withMessage("a message could not be parsed: " + e)
              .withCause(e)
              .asException();
        }
      }
    };
  }

  /**
   * {@code m} for a call with grpc-java's per-call message limits ({@code
   * CallOptions.withMaxOutboundMessageSize} and {@code withMaxInboundMessageSize}; null: none).
   *
   * <ul>
   *   <li>A message sent is serialized (never written straight into the frame, so that its size is
   *       known before it goes, and each message is serialized once); a larger one is released and
   *       fails the call as grpc-java's does: CANCELLED "Failed to stream message", its cause
   *       RESOURCE_EXHAUSTED "message too large N > M".
   *   <li>A message received above its limit is not parsed: RESOURCE_EXHAUSTED "gRPC message
   *       exceeds maximum size M: N".
   * </ul>
   *
   * The wording is grpc-java's, which its users' code and tests look for.
   */
  static <T> Marshaller<T> sizeLimited(Marshaller<T> m, Integer maxSent, Integer maxReceived) {
    int maxOut = maxSent == null ? Integer.MAX_VALUE : maxSent;
    int maxIn = maxReceived == null ? Integer.MAX_VALUE : maxReceived;
    return new Marshaller<>() {
      @Override
      public ByteBuf serialize(T value, io.netty.buffer.ByteBufAllocator alloc) {
        ByteBuf bytes = m.serialize(value, alloc);
        int size = bytes.readableBytes();
        if (size > maxOut) {
          bytes.release();
          throw Status.CANCELLED
              .withMessage("Failed to stream message")
              .withCause(
                  Status.RESOURCE_EXHAUSTED
                      .withMessage("message too large " + size + " > " + maxOut)
                      .asException())
              .asException();
        }
        return bytes;
      }

      @Override
      public T parse(ByteBuf data) {
        int size = data.readableBytes();
        if (size > maxIn) {
          throw Status.RESOURCE_EXHAUSTED
              .withMessage("gRPC message exceeds maximum size " + maxIn + ": " + size)
              .asException();
        }
        return m.parse(data);
      }
    };
  }
}
