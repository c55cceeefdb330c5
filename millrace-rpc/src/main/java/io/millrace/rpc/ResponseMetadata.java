package io.millrace.rpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.buffer.ByteBuf;

/**
 * Metadata on a call's response frames, present only when there is something to say: response
 * headers (on the first response frame) and the trailer (status and trailers, on the frame that
 * ends the call, which has C set). A unary call that succeeds without headers or trailers answers
 * with a bare PAYLOAD: no metadata at all.
 *
 * <pre>
 * byte 0       version (3 bits, 1) | flags (5 bits): 0x01 HEADERS, 0x02 TRAILER,
 *              0x04 NO_MESSAGE (the frame's data is not a message: a trailer alone)
 * [HEADERS]    header list (as in {@link CallHeader})
 * [TRAILER]    varint status code, varint length + UTF-8 message (0: none),
 *              varint length + details, header list of trailers
 * </pre>
 *
 * A failed call ends with PAYLOAD[C] (no N) whose metadata has the trailer: RSocket's ERROR frame
 * carries only a UTF-8 message, so it could not carry details or trailers. Callers that route with
 * the routing extension instead (rsocket-java, Spring) get ERROR[APPLICATION_ERROR] with the status
 * as its message.
 */
final class ResponseMetadata {
  static final int VERSION = 1;
  static final int FLAG_HEADERS = 0x01;
  static final int FLAG_TRAILER = 0x02;
  static final int FLAG_NO_MESSAGE = 0x04;

  private final Headers headers;
  private final Status status;
  private final Headers trailers;
  private final boolean noMessage;

  private ResponseMetadata(Headers headers, Status status, Headers trailers, boolean noMessage) {
    this.headers = headers;
    this.status = status;
    this.trailers = trailers;
    this.noMessage = noMessage;
  }

  /** Whether the frame's data is not a message (NO_MESSAGE). */
  boolean noMessage() {
    return noMessage;
  }

  /** Response headers ({@link Headers#EMPTY} when none). */
  Headers headers() {
    return headers;
  }

  /** The status the call ended with, or null when this frame carries no trailer. */
  Status status() {
    return status;
  }

  /** Trailers ({@link Headers#EMPTY} when none). */
  Headers trailers() {
    return trailers;
  }

  /**
   * Writes response metadata; {@code status} null writes no trailer (then trailers must be empty).
   */
  static void encode(ByteBuf out, Headers headers, Status status, Headers trailers) {
    encode(out, headers, status, trailers, false);
  }

  /** As {@link #encode(ByteBuf, Headers, Status, Headers)}, with NO_MESSAGE when asked. */
  static void encode(
      ByteBuf out, Headers headers, Status status, Headers trailers, boolean noMessage) {
    boolean hasHeaders = headers != null && !headers.isEmpty();
    if (status == null && trailers != null && !trailers.isEmpty()) {
      throw new IllegalArgumentException("trailers go with a status");
    }
    int flags =
        (hasHeaders ? FLAG_HEADERS : 0)
            | (status != null ? FLAG_TRAILER : 0)
            | (noMessage ? FLAG_NO_MESSAGE : 0);
    out.writeByte(Wire.firstByte(VERSION, flags));
    if (hasHeaders) {
      Wire.writeHeaders(out, headers);
    }
    if (status != null) {
      Wire.writeVarint(out, status.code().value());
      Wire.writeUtf8(out, status.message() == null ? "" : status.message());
      Wire.writeVarint(out, status.details().size());
      out.writeBytes(status.details().asReadOnlyByteBuffer());
      Wire.writeHeaders(out, trailers == null ? Headers.EMPTY : trailers);
    }
  }

  /**
   * Reads response metadata (from the reader index, left unchanged).
   *
   * @throws StatusException INTERNAL for malformed metadata or another version, RESOURCE_EXHAUSTED
   *     for headers or trailers over {@code maxHeaderBytes}
   */
  static ResponseMetadata decode(ByteBuf metadata, int maxHeaderBytes) {
    if (metadata == null || !metadata.isReadable()) {
      throw Status.INTERNAL.withMessage("empty response metadata").asException();
    }
    ByteBuf in = metadata.duplicate();
    int first = in.readUnsignedByte();
    int version = first >>> Wire.VERSION_SHIFT;
    int flags = first & Wire.FLAGS_MASK;
    if (version != VERSION || (flags & ~(FLAG_HEADERS | FLAG_TRAILER | FLAG_NO_MESSAGE)) != 0) {
      throw Status.INTERNAL
          .withMessage("response metadata of version " + version + ", flags " + flags)
          .asException();
    }
    try {
      Headers headers =
          (flags & FLAG_HEADERS) != 0 ? Wire.readHeaders(in, maxHeaderBytes) : Headers.EMPTY;
      Status status = null;
      Headers trailers = Headers.EMPTY;
      if ((flags & FLAG_TRAILER) != 0) {
        long code = Wire.readVarint(in);
        String message = Wire.readUtf8(in, "status message");
        int detailsLength = Wire.readLength(in, "status details");
        ByteString details = ByteString.EMPTY;
        if (detailsLength > 0) {
          byte[] d = new byte[detailsLength];
          in.readBytes(d);
          details = UnsafeByteOperations.unsafeWrap(d); // ours alone: no second copy
        }
        status =
            Status.of(Status.Code.of(code > Integer.MAX_VALUE ? -1 : (int) code))
                .withMessage(message.isEmpty() ? null : message)
                .withDetails(details);
        trailers = Wire.readHeaders(in, maxHeaderBytes - headers.byteSize());
      }
      if (in.isReadable()) {
        throw new Wire.MalformedMetadataException(
            in.readableBytes() + " bytes after the response metadata");
      }
      return new ResponseMetadata(headers, status, trailers, (flags & FLAG_NO_MESSAGE) != 0);
    } catch (Wire.MalformedMetadataException e) {
      throw Status.INTERNAL
          .withMessage("malformed response metadata: " + e.getMessage())
          .asException();
    } catch (Wire.HeadersTooLargeException e) {
      throw Status.RESOURCE_EXHAUSTED.withMessage("response " + e.getMessage()).asException();
    }
  }
}
