package io.millrace.flavours;

import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * What every responder in the suite does, whatever its flavour, keyed by the request's data.
 *
 * <ul>
 *   <li>request-response: {@link #FAIL} fails (IllegalArgumentException), {@link #THROW} throws,
 *       {@link #CODE} fails with {@link #USER_CODE} and the message {@code custom}, {@link #EMPTY}
 *       completes without a payload, {@link #NEVER} never answers (its cancellation is recorded);
 *       anything else is echoed with its metadata;
 *   <li>request-stream: {@code N} sends N payloads, {@code N:SIZE} sends N payloads of SIZE bytes
 *       ({@link #item}), {@link #NEVER} sends nothing (Reactor only), {@code async:N} sends N from
 *       a thread of the flavour's own scheduler, {@link #INF} sends until cancelled, {@link #FAIL}
 *       sends three and fails, {@link #THROW} throws; what is emitted and the cancellation are
 *       recorded;
 *   <li>request-channel: echoes the first payload and every later one; an inbound {@link #FAIL}
 *       fails the channel; {@link #THROW} makes the responder's code throw (the handler method for
 *       a first payload, where the flavour lets it see one; its per-payload code otherwise); a
 *       first payload {@code take:N} ({@link #TAKE}) has only the next N echoed, then the
 *       requester's payloads cancelled (not the StreamObserver responder, which cannot stop
 *       reading); the cancellation is recorded;
 *   <li>fire-and-forget and metadata push: recorded.
 * </ul>
 */
final class Behaviour {
  static final String FAIL = "fail";
  static final String THROW = "throw";
  static final String CODE = "code";
  static final String EMPTY = "empty";
  static final String NEVER = "never";
  static final String INF = "inf";

  /**
   * Prefix of a channel's first payload, {@code take:N}: the responder echoes it and the next N
   * payloads, then stops reading (cancels the requester's payloads) and completes.
   */
  static final String TAKE = "take:";

  /** Prefix of a request-stream whose payloads are emitted from another thread: {@code async:N}. */
  static final String ASYNC = "async:";

  static final int USER_CODE = ErrorCode.MIN_USER_ALLOWED + 1;

  /** Payloads larger than this are fragmented on every connection of the suite. */
  static final int FRAGMENT_SIZE = 1024;

  private Behaviour() {}

  /** N of a channel's first payload {@code take:N}; -1 for any other. */
  static int taken(Payload first) {
    String data = first.dataUtf8();
    return data.startsWith(TAKE) ? Integer.parseInt(data.substring(TAKE.length())) : -1;
  }

  /** The number of payloads a request-stream asks for; {@link Long#MAX_VALUE} for {@link #INF}. */
  static long count(String request) {
    if (request.equals(INF)) {
      return Long.MAX_VALUE;
    }
    if (request.startsWith(ASYNC)) {
      return Long.parseLong(request.substring(ASYNC.length()));
    }
    int colon = request.indexOf(':');
    return Long.parseLong(colon < 0 ? request : request.substring(0, colon));
  }

  /** The size of each payload a request-stream asks for; 0: as short as the number. */
  static int size(String request) {
    if (request.startsWith(ASYNC)) {
      return 0;
    }
    int colon = request.indexOf(':');
    return colon < 0 ? 0 : Integer.parseInt(request.substring(colon + 1));
  }

  /** The data of the i-th stream payload: its number, padded with dots to {@code size}. */
  static String item(long i, int size) {
    String n = Long.toString(i);
    return size <= n.length() ? n : n + ".".repeat(size - n.length());
  }

  /**
   * A payload in a pooled buffer: the leak detector tracks it, so a payload Millrace drops without
   * releasing fails the build.
   */
  static Payload pooled(String data) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(data.length());
    b.writeCharSequence(data, StandardCharsets.UTF_8);
    return Payload.of(b);
  }

  /** Connection-level metadata in a pooled buffer (tracked by the leak detector). */
  static ByteBuf pooledMetadata(String metadata) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(metadata.length());
    b.writeCharSequence(metadata, StandardCharsets.UTF_8);
    return b;
  }

  static Payload echo(Payload p) {
    return Payload.of(p.metadata() == null ? null : p.metadataUtf8(), p.dataUtf8());
  }
}
