package io.millrace.rpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.GeneratedMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import com.google.protobuf.UninitializedMessageException;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.internal.Signatures;
import io.millrace.streams.internal.Payloads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;

/**
 * Protobuf messages straight into and out of Netty buffers.
 *
 * <p>Sending: a message is written once, into the outbound frame ({@link PayloadEncoder}); only a
 * message that cannot go into the connection's frame batch is written into a pooled buffer of its
 * own. Protobuf's encoders cannot be pointed at new memory, so each write into a buffer would make
 * one; instead, on Netty's threads, a small message is encoded by the thread's one array encoder,
 * reused across messages until its 64 KiB array is used up, and its bytes copied into the frame.
 * That copy is cheaper than the encoder object (and the two NIO views) a direct write costs per
 * message.
 *
 * <p>Receiving: a message is parsed from the received bytes; on Netty's threads a small one is
 * first copied into the thread's decoding array and read there by a decoder that is reused in the
 * same way, held to the message's bytes by a limit, and built by the thread's builder of the last
 * type it parsed (protobuf's parsers make a builder per message). Protobuf copies the fields it
 * keeps, so a parsed message never points into a buffer that is released after the call.
 */
public final class ProtobufMarshaller<T extends MessageLite>
    implements Marshaller<T>, PayloadEncoder<T> {
  static {
    Signatures.resolve(
        ProtobufMarshaller.class, Scratch.class); // so that C2 may inline calls to their methods
  }

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
  public PayloadEncoder<T> encoder() {
    return this;
  }

  @Override
  public ByteBuf serialize(T value, ByteBufAllocator alloc) {
    try {
      return toBuffer(value, alloc);
    } catch (StatusException e) {
      throw e;
    } catch (RuntimeException e) {
      throw couldNotSerialize(e);
    }
  }

  @Override
  public int length(T value) {
    return value.getSerializedSize();
  }

  @Override
  public void encode(T value, ByteBuf out, int index, int length) {
    if (length == 0) {
      return;
    }
    try {
      Scratch scratch;
      if (out.hasArray()) {
        CodedOutputStream coded =
            CodedOutputStream.newInstance(out.array(), out.arrayOffset() + index, length);
        value.writeTo(coded);
        coded.checkNoSpaceLeft();
      } else if (length <= SCRATCH_MESSAGE_BYTES && (scratch = Scratch.idle(true)) != null) {
        int at = scratch.encode(value, length);
        Payloads.copyInto(scratch.encoded, at, out, index, length);
      } else {
        CodedOutputStream coded =
            CodedOutputStream.newInstance(out.internalNioBuffer(index, length));
        value.writeTo(coded);
        coded.checkNoSpaceLeft();
      }
    } catch (IOException | RuntimeException e) {
      throw couldNotSerialize(e);
    }
  }

  /**
   * As {@link #encode}, into the frame writer's batch at its known address: a small message is
   * encoded in the thread's scratch array and copied there without asking the batch for its address
   * (see {@link PayloadEncoder#encodeAt}).
   */
  @Override
  public void encodeAt(T value, ByteBuf out, long address, int index, int length) {
    Scratch scratch;
    if (address != 0
        && length != 0
        && length <= SCRATCH_MESSAGE_BYTES
        && (scratch = Scratch.idle(true)) != null) {
      try {
        int at = scratch.encode(value, length);
        Payloads.copyToAddress(scratch.encoded, at, address + index, length);
      } catch (IOException | RuntimeException e) {
        throw couldNotSerialize(e);
      }
      return;
    }
    encode(value, out, index, length);
  }

  private static StatusException couldNotSerialize(Exception e) {
    return Status.INTERNAL.withMessage("could not serialize a message").withCause(e).asException();
  }

  /** Messages up to this size go through the thread's scratch arrays. */
  private static final int SCRATCH_MESSAGE_BYTES = 4096;

  /** Each scratch array's size: a reused coder serves this many bytes of messages. */
  private static final int SCRATCH_ARRAY_BYTES = 64 * 1024;

  private static final FastThreadLocal<Scratch> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected Scratch initialValue() {
          return new Scratch();
        }
      };

  /**
   * A Netty thread's arrays and the coders reading and writing them; each coder moves along its
   * array message after message and is replaced when the array is used up or a message failed.
   *
   * <p>No reference is stored into this long-lived object per message: a field is written when a
   * coder or builder is made or dropped. Under G1 (the default collector) a reference stored into
   * an old object takes the write barrier's slow path, a memory fence; the builder, which every
   * message writes into, is replaced along with the decoder (every 64 KiB of messages), so that at
   * any useful message rate it is gone before it grows old. Before 6c1b62a one builder served a
   * thread for good and the scratch's fields were rewritten around every message;
   * docs/benchmarks.md (thirty-eighth session) has what that cost and when.
   */
  private static final class Scratch {
    final byte[] encoded = new byte[SCRATCH_ARRAY_BYTES];
    final byte[] decoded = new byte[SCRATCH_ARRAY_BYTES];
    CodedOutputStream encoder;
    CodedInputStream decoder;

    /**
     * Whether a message is being written or read here: a message whose own writing or parsing calls
     * a marshaller again (hand-written ones can) takes the other path instead of writing over the
     * bytes of the one in progress.
     */
    boolean encoding;

    boolean decoding;

    /**
     * The thread's scratch, when the thread is one of Netty's (whose thread-locals are removed with
     * it) and not already in the coder asked for; else null.
     */
    static Scratch idle(boolean encode) {
      if (!FastThreadLocalThread.currentThreadHasFastThreadLocal()) {
        return null;
      }
      Scratch scratch = SCRATCH.get();
      return (encode ? scratch.encoding : scratch.decoding) ? null : scratch;
    }

    /** Encodes {@code value} ({@code length} bytes) into {@link #encoded}; returns where. */
    int encode(MessageLite value, int length) throws IOException {
      CodedOutputStream coded = encoder;
      if (coded == null || coded.spaceLeft() < length) {
        coded = CodedOutputStream.newInstance(encoded);
        encoder = coded;
      }
      int at = coded.getTotalBytesWritten();
      encoding = true;
      try {
        value.writeTo(coded);
        if (coded.getTotalBytesWritten() - at != length) {
          throw new IOException("the message's size changed while it was written");
        }
      } catch (Throwable e) {
        encoder = null; // part of a message may be in it
        throw e;
      } finally {
        encoding = false;
      }
      return at;
    }

    /** The type of the messages {@link #builder} builds (a default instance), or null. */
    MessageLite builderType;

    /**
     * A cleared builder of {@link #builderType}, the first generated type parsed with the current
     * decoder, or null. Protobuf's parsers make a builder per message; a builder of protobuf's
     * generated classes stays usable after it has built (the built message shares nothing it will
     * change) and {@code clear()} resets it whole, so a run of messages of one type is parsed with
     * one. Messages of another type (until the next decoder) and other messages (lite, whose
     * builder makes a new instance on every clear, {@code DynamicMessage}, whose clear keeps its
     * oneof cases, and hand-written ones) go through their parser. Cleared after each message, so
     * it keeps nothing of the message it built.
     */
    MessageLite.Builder builder;

    /** Parses the {@code length} readable bytes of {@code data} into a {@code type}. */
    @SuppressWarnings("unchecked")
    <T extends MessageLite> T decode(T type, Parser<T> parser, ByteBuf data, int length)
        throws IOException {
      CodedInputStream in = decoder;
      if (in == null || in.getTotalBytesRead() + length > SCRATCH_ARRAY_BYTES) {
        in = CodedInputStream.newInstance(decoded);
        decoder = in;
        builder = null; // a builder per decoder
      }
      MessageLite.Builder b = builder;
      if (b == null && type instanceof GeneratedMessage) {
        b = type.newBuilderForType();
        builder = b;
        builderType = type;
      } else if (b != null && builderType != type) {
        b = null; // another type's: this message goes through its parser, storing nothing here
      }
      int at = in.getTotalBytesRead();
      Payloads.copyReadable(data, decoded, at);
      T value;
      decoding = true;
      try {
        int limit = in.pushLimit(length);
        if (b == null) {
          value = parser.parsePartialFrom(in, ExtensionRegistryLite.getEmptyRegistry());
        } else {
          try {
            b.mergeFrom(in, ExtensionRegistryLite.getEmptyRegistry());
          } catch (UninitializedMessageException e) {
            throw e.asInvalidProtocolBufferException(); // as protobuf's own parsers turn it
          }
          value = (T) b.buildPartial();
          b.clear();
        }
        in.checkLastTagWas(0);
        in.popLimit(limit);
      } catch (Throwable e) {
        // Stopped inside the message, under its limit: the next message makes a new decoder, and
        // a new builder with it (this one may hold part of this message).
        decoder = null;
        throw e;
      } finally {
        decoding = false;
      }
      return value;
    }
  }

  @Override
  public T parse(ByteBuf data) {
    try {
      int length = data.readableBytes();
      T value;
      Scratch scratch;
      if (length == 0) {
        value = defaultInstance; // what parsing no bytes gives
      } else if (data.hasArray()) {
        return parser.parseFrom(data.array(), data.arrayOffset() + data.readerIndex(), length);
      } else if (length <= SCRATCH_MESSAGE_BYTES && (scratch = Scratch.idle(false)) != null) {
        value = scratch.decode(defaultInstance, parser, data, length);
      } else if (data.nioBufferCount() == 1) {
        CodedInputStream in =
            CodedInputStream.newInstance(data.nioBuffer(data.readerIndex(), length));
        value = parser.parsePartialFrom(in, ExtensionRegistryLite.getEmptyRegistry());
        in.checkLastTagWas(0); // as the array and stream paths check: no stray end-group tag
      } else {
        return parser.parseFrom(new ByteBufInputStream(data.duplicate()));
      }
      if (!value.isInitialized()) {
        throw new InvalidProtocolBufferException("the message lacks required fields");
      }
      return value;
    } catch (IOException e) { // InvalidProtocolBufferException, or a builder's IOException
      throw Status.INTERNAL
          .withMessage("invalid protobuf message: " + e.getMessage())
          .withCause(e)
          .asException();
    }
  }
}
