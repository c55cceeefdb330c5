package io.millrace.rpc;

import io.netty.buffer.ByteBuf;

/**
 * The call header: the metadata of a call's first frame (REQUEST_RESPONSE, REQUEST_FNF,
 * REQUEST_STREAM or REQUEST_CHANNEL) on connections whose SETUP declares {@link #MIME_TYPE}.
 *
 * <pre>
 * byte 0        version (3 bits, 1) | flags (5 bits): 0x01 NAME, 0x02 DEADLINE, 0x04 HEADERS,
 *               0x08 NO_MESSAGE (a channel's first frame whose data is not a message: the
 *               caller's stream of messages starts with the next frame, or is empty)
 * method        NAME clear: the method's 8-byte id, big-endian ({@link MethodIds})
 *               NAME set:   varint length + UTF-8 "package.Service/Method"
 * [DEADLINE]    varint: microseconds the caller still gives the call when it sends it
 * [HEADERS]     varint count, then per entry varint length + key, varint length + value
 * </pre>
 *
 * The common call (no deadline, no headers) carries 9 bytes. The id is a 64-bit hash of the full
 * name, so that neither side builds or hashes a string per call, and two method names of one server
 * colliding is out of practical reach (the server refuses to register a collision). The deadline
 * travels as time remaining, as gRPC's {@code grpc-timeout} does, so clocks need not agree.
 */
final class CallHeader {
  /** The SETUP metadata MIME type that says a connection's calls carry this header. */
  static final String MIME_TYPE = "application/x.millrace.rpc.v1";

  static final int VERSION = 1;
  static final int FLAG_NAME = 0x01;
  static final int FLAG_DEADLINE = 0x02;
  static final int FLAG_HEADERS = 0x04;
  static final int FLAG_NO_MESSAGE = 0x08;
  private static final int KNOWN_FLAGS = FLAG_NAME | FLAG_DEADLINE | FLAG_HEADERS | FLAG_NO_MESSAGE;

  /** No deadline. */
  static final long NO_TIMEOUT = -1;

  private final long methodId;
  private final String methodName;
  private final long timeoutMicros;
  private final Headers headers;
  private final boolean noMessage;

  private CallHeader(
      long methodId, String methodName, long timeoutMicros, Headers headers, boolean noMessage) {
    this.methodId = methodId;
    this.methodName = methodName;
    this.timeoutMicros = timeoutMicros;
    this.headers = headers;
    this.noMessage = noMessage;
  }

  /** Whether the frame's data is not a message (NO_MESSAGE). */
  boolean noMessage() {
    return noMessage;
  }

  /** The method's id: sent, or computed from the name when the call named it. */
  long methodId() {
    return methodId;
  }

  /** The full method name when the call named it, otherwise null. */
  String methodName() {
    return methodName;
  }

  /** Microseconds the caller gave the call, or {@link #NO_TIMEOUT}. */
  long timeoutMicros() {
    return timeoutMicros;
  }

  /** Request headers ({@link Headers#EMPTY} when none). */
  Headers headers() {
    return headers;
  }

  /**
   * Writes a call header. {@code methodName} non-null sends the name instead of the id; {@code
   * timeoutMicros} is {@link #NO_TIMEOUT} or at least 0.
   */
  static void encode(
      ByteBuf out, long methodId, String methodName, long timeoutMicros, Headers headers) {
    encode(out, methodId, methodName, timeoutMicros, headers, false);
  }

  /** As {@link #encode(ByteBuf, long, String, long, Headers)}, with NO_MESSAGE when asked. */
  static void encode(
      ByteBuf out,
      long methodId,
      String methodName,
      long timeoutMicros,
      Headers headers,
      boolean noMessage) {
    int flags =
        (noMessage ? FLAG_NO_MESSAGE : 0)
            | (methodName != null ? FLAG_NAME : 0)
            | (timeoutMicros != NO_TIMEOUT ? FLAG_DEADLINE : 0)
            | (headers != null && !headers.isEmpty() ? FLAG_HEADERS : 0);
    out.writeByte(Wire.firstByte(VERSION, flags));
    if (methodName != null) {
      Wire.writeUtf8(out, methodName);
    } else {
      out.writeLong(methodId);
    }
    if (timeoutMicros != NO_TIMEOUT) {
      if (timeoutMicros < 0) {
        throw new IllegalArgumentException("timeout must be at least 0: " + timeoutMicros);
      }
      Wire.writeVarint(out, timeoutMicros);
    }
    if ((flags & FLAG_HEADERS) != 0) {
      Wire.writeHeaders(out, headers);
    }
  }

  /** The first byte of a plain call header: this version, no flags. */
  private static final int PLAIN_FIRST_BYTE = Wire.firstByte(VERSION, 0);

  /**
   * Whether {@code metadata} is a plain call header: this version, no flags, the 8-byte method id
   * only (most calls), which a server reads with {@link #plainMethodId} without decoding.
   */
  static boolean isPlain(ByteBuf metadata) {
    return metadata != null
        && metadata.readableBytes() == 1 + Long.BYTES
        && metadata.getUnsignedByte(metadata.readerIndex()) == PLAIN_FIRST_BYTE;
  }

  /** The method id of a {@linkplain #isPlain plain} call header. */
  static long plainMethodId(ByteBuf metadata) {
    return metadata.getLong(metadata.readerIndex() + 1);
  }

  /**
   * Reads the call header in {@code metadata} (from its reader index, which is left unchanged).
   *
   * @throws StatusException INTERNAL for a malformed header, UNIMPLEMENTED for another version,
   *     RESOURCE_EXHAUSTED for headers over {@code maxHeaderBytes}
   */
  static CallHeader decode(ByteBuf metadata, int maxHeaderBytes) {
    if (metadata == null || !metadata.isReadable()) {
      throw Status.INTERNAL.withMessage("the call has no call header").asException();
    }
    ByteBuf in = metadata.duplicate();
    int first = in.readUnsignedByte();
    int version = first >>> Wire.VERSION_SHIFT;
    if (version != VERSION) {
      throw Status.UNIMPLEMENTED
          .withMessage("call header version " + version + " (this server reads " + VERSION + ")")
          .asException();
    }
    int flags = first & Wire.FLAGS_MASK;
    if ((flags & ~KNOWN_FLAGS) != 0) {
      throw Status.INTERNAL.withMessage("call header with unknown flags " + flags).asException();
    }
    try {
      long id;
      String name = null;
      if ((flags & FLAG_NAME) != 0) {
        name = Wire.readUtf8(in, "method name");
        id = MethodIds.of(name);
      } else {
        if (in.readableBytes() < Long.BYTES) {
          throw new Wire.MalformedMetadataException("call header shorter than its method id");
        }
        id = in.readLong();
      }
      long timeout = (flags & FLAG_DEADLINE) != 0 ? Wire.readVarint(in) : NO_TIMEOUT;
      if ((flags & FLAG_DEADLINE) != 0 && timeout < 0) {
        throw new Wire.MalformedMetadataException("negative timeout");
      }
      Headers headers =
          (flags & FLAG_HEADERS) != 0 ? Wire.readHeaders(in, maxHeaderBytes) : Headers.EMPTY;
      if (in.isReadable()) {
        throw new Wire.MalformedMetadataException(
            in.readableBytes() + " bytes after the call header");
      }
      return new CallHeader(id, name, timeout, headers, (flags & FLAG_NO_MESSAGE) != 0);
    } catch (Wire.MalformedMetadataException e) {
      throw Status.INTERNAL.withMessage("malformed call header: " + e.getMessage()).asException();
    } catch (Wire.HeadersTooLargeException e) {
      throw Status.RESOURCE_EXHAUSTED.withMessage("request " + e.getMessage()).asException();
    }
  }

  @Override
  public String toString() {
    return "CallHeader{"
        + (methodName != null ? methodName : Long.toHexString(methodId))
        + (timeoutMicros != NO_TIMEOUT ? ", timeout " + timeoutMicros + " us" : "")
        + (headers.isEmpty() ? "" : ", " + headers)
        + "}";
  }
}
