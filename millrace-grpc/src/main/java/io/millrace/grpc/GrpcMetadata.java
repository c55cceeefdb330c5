package io.millrace.grpc;

import com.google.protobuf.ByteString;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.millrace.rpc.Headers;
import io.millrace.rpc.Status;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;

/**
 * Headers and statuses across the bridge: gRPC's {@link Metadata} and {@link io.grpc.Status} to
 * Millrace's {@link Headers} and {@link Status} and back. The codes are the same seventeen on both
 * sides; details travel in gRPC's {@code grpc-status-details-bin} trailer.
 */
final class GrpcMetadata {
  private static final System.Logger LOG = System.getLogger(GrpcMetadata.class.getName());
  static final String DETAILS_KEY = "grpc-status-details-bin";
  static final Metadata.Key<byte[]> DETAILS =
      Metadata.Key.of(DETAILS_KEY, Metadata.BINARY_BYTE_MARSHALLER);

  private GrpcMetadata() {}

  /**
   * The application's entries of {@code metadata}: keys gRPC reserves ({@code grpc-*}) and the
   * transport's own ({@code content-type}, {@code te}, {@code user-agent}) are left out.
   *
   * @throws IllegalArgumentException when an entry is not a valid header (a text value outside
   *     printable ASCII, as gRPC's specification has it)
   */
  static Headers toHeaders(Metadata metadata) {
    return toHeaders(metadata, null);
  }

  /**
   * {@link #toHeaders(Metadata)}, leaving out the entries that are not valid headers (logged at
   * DEBUG, as {@code from}'s): a peer's, which grpc-java's server would pass on, so a call that
   * carries one must not fail for it.
   */
  static Headers toHeadersSkippingInvalid(Metadata metadata, String from) {
    return toHeaders(
        metadata,
        (key, why) -> LOG.log(Level.DEBUG, "left out {0}''s header {1}: {2}", from, key, why));
  }

  /**
   * {@link #toHeaders(Metadata)} of what a hosted service's {@code method} sends ({@code what}:
   * headers or trailers), leaving out the entries that are not valid headers. The first time a key
   * is left out it is logged as a WARNING (the service's code may want a {@code -bin} key), later
   * at DEBUG: a service that sends one on every call does not fill the log.
   */
  static Headers toHeadersSkippingInvalid(
      Metadata metadata, io.grpc.MethodDescriptor<?, ?> method, String what) {
    return toHeaders(
        metadata,
        (key, why) ->
            LOG.log(
                warnedKeys.size() < MAX_WARNED_KEYS && warnedKeys.add(key)
                    ? Level.WARNING
                    : Level.DEBUG,
                "left out the {0} header {1} of {2}: {3}",
                what,
                key,
                method.getFullMethodName(),
                why));
  }

  /** Keys already warned of; a few hundred at most, then every one is logged at DEBUG. */
  private static final java.util.Set<String> warnedKeys =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static final int MAX_WARNED_KEYS = 256;

  /** Told of an entry left out: its key, and why. */
  private interface LeftOut {
    void entry(String key, String why);
  }

  private static Headers toHeaders(Metadata metadata, LeftOut leftOut) {
    // The entries as stored (names and raw values, binary ones not base64): one array, where
    // keys() and a Key per name would build a set and look each name up again, on every call.
    byte[][] entries = InternalMetadata.serialize(metadata);
    Headers headers = null;
    for (int i = 0; i + 1 < entries.length; i += 2) {
      if (reserved(entries[i])) {
        continue; // most of a gRPC client's metadata: no String made for it
      }
      String key = new String(entries[i], StandardCharsets.US_ASCII);
      if (headers == null) {
        headers = new Headers();
      }
      try {
        if (Headers.isBinary(key)) {
          headers.putBinary(key, entries[i + 1]);
        } else {
          headers.put(key, new String(entries[i + 1], StandardCharsets.US_ASCII));
        }
      } catch (IllegalArgumentException e) {
        if (leftOut == null) {
          throw e;
        }
        leftOut.entry(key, e.getMessage());
      }
    }
    return headers == null || headers.size() == 0 ? Headers.EMPTY : headers;
  }

  /** Adds {@code headers}' entries (null: none) to {@code metadata}. */
  static Metadata addTo(Metadata metadata, Headers headers) {
    if (headers == null) {
      return metadata;
    }
    for (int i = 0; i < headers.size(); i++) {
      String key = headers.keyAt(i);
      if (Headers.isBinary(key)) {
        metadata.put(Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER), headers.valueAt(i));
      } else {
        metadata.put(
            Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER),
            new String(headers.valueAt(i), java.nio.charset.StandardCharsets.US_ASCII));
      }
    }
    return metadata;
  }

  private static final byte[][] RESERVED_NAMES = {
    "content-type".getBytes(StandardCharsets.US_ASCII),
    "te".getBytes(StandardCharsets.US_ASCII),
    "user-agent".getBytes(StandardCharsets.US_ASCII)
  };

  /** {@link #reserved(String)} on a name's bytes. */
  static boolean reserved(byte[] name) {
    if (name.length > 0 && name[0] == ':') {
      return true;
    }
    if (name.length >= 5
        && name[0] == 'g'
        && name[1] == 'r'
        && name[2] == 'p'
        && name[3] == 'c'
        && name[4] == '-') {
      return true;
    }
    for (byte[] r : RESERVED_NAMES) {
      if (java.util.Arrays.equals(r, name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether gRPC or HTTP/2 owns {@code key}: it is not an application header. {@code user-agent}
   * names the caller's gRPC library, which a call over RSocket does not carry either.
   */
  static boolean reserved(String key) {
    return key.startsWith("grpc-")
        || key.startsWith(":")
        || key.equals("content-type")
        || key.equals("te")
        || key.equals("user-agent");
  }

  /** {@code status} as gRPC's (details go in the trailers: {@link #trailers}). */
  static io.grpc.Status toGrpc(Status status) {
    io.grpc.Status s = io.grpc.Status.fromCodeValue(status.code().value());
    if (status.message() != null) {
      s = s.withDescription(status.message());
    }
    if (status.cause() != null) {
      s = s.withCause(status.cause());
    }
    return s;
  }

  /** The trailers to send with {@code status}: {@code headers}, and the status's details. */
  static Metadata trailers(Status status, Headers headers) {
    Metadata trailers = addTo(new Metadata(), headers);
    byte[] details = detailsOnTheWire(status);
    if (details != null) {
      trailers.put(DETAILS, details);
    }
    return trailers;
  }

  /**
   * {@code status}'s details as gRPC sends them, or null when it has none: a {@code
   * google.rpc.Status} whose code and message are the status's own, since gRPC clients (grpc-go's,
   * and so grpcurl and ghz) fail a call whose details disagree with its status. Details that are a
   * {@code google.rpc.Status}, as Millrace's convention has them, keep their entries; other bytes
   * cannot be told to a gRPC client and are left out.
   */
  static byte[] detailsOnTheWire(Status status) {
    if (status.details().isEmpty()) {
      return null;
    }
    com.google.rpc.Status.Builder rpc;
    try {
      rpc = com.google.rpc.Status.parseFrom(status.details()).toBuilder();
    } catch (com.google.protobuf.InvalidProtocolBufferException notAStatus) {
      rpc = com.google.rpc.Status.newBuilder();
    }
    rpc.setCode(status.code().value());
    if (status.message() != null) {
      rpc.setMessage(status.message());
    } else {
      rpc.clearMessage();
    }
    return rpc.build().toByteArray();
  }

  /** gRPC's {@code status} with the details of {@code trailers} (null: none) as Millrace's. */
  static Status fromGrpc(io.grpc.Status status, Metadata trailers) {
    Status s = Status.Code.of(status.getCode().value()).toStatus();
    if (status.getDescription() != null) {
      s = s.withMessage(status.getDescription());
    }
    if (status.getCause() != null) {
      s = s.withCause(status.getCause());
    }
    byte[] details = trailers == null ? null : trailers.get(DETAILS);
    if (details != null && details.length > 0) {
      s = s.withDetails(ByteString.copyFrom(details));
    }
    return s;
  }
}
