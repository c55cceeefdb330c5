package io.millrace.interop;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.millrace.core.Connection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.util.DefaultPayload;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * Helpers shared by the interop tests: payload conversions, request-response on either side, the
 * echo servers' stream contents and bounded waiting.
 */
final class Interop {
  static final String HOST = "127.0.0.1";
  static final Duration TIMEOUT = Duration.ofSeconds(5);

  private Interop() {}

  /** A Millrace request buffer (ownership passes to the connection); null stays null. */
  static ByteBuf buf(String s) {
    return s == null ? null : Unpooled.copiedBuffer(s, UTF_8);
  }

  /** Reads a borrowed buffer as UTF-8 without consuming it; null stays null. */
  static String utf8(ByteBuf buf) {
    return buf == null ? null : buf.toString(buf.readerIndex(), buf.readableBytes(), UTF_8);
  }

  static byte[] bytes(String s) {
    return s == null ? null : s.getBytes(UTF_8);
  }

  static String utf8(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    byte[] bytes = new byte[copy.remaining()];
    copy.get(bytes);
    return new String(bytes, UTF_8);
  }

  /** An rsocket-java payload that owns no pooled memory; metadata null means none. */
  static Payload payload(String data, String metadata) {
    return DefaultPayload.create(bytes(data), bytes(metadata));
  }

  /** Decodes an rsocket-java payload and releases it. */
  static Received receive(Payload payload) {
    try {
      return new Received(
          utf8(payload.getData()), payload.hasMetadata() ? utf8(payload.getMetadata()) : null);
    } finally {
      payload.release();
    }
  }

  /** An rsocket-java request-response, its answer decoded. */
  static Received echo(RSocket rsocket, String data, String metadata) {
    return receive(rsocket.requestResponse(payload(data, metadata)).block(TIMEOUT));
  }

  /** A Millrace request-response; the payloads that arrived before it completed. */
  static List<Received> echo(Connection connection, String data, String metadata) throws Exception {
    MillraceRecorder response = new MillraceRecorder();
    connection.requestResponse(buf(metadata), buf(data), response);
    response.awaitComplete();
    return response.items;
  }

  /**
   * What the echo servers stream for request-stream data {@code count}: "0".."count-1", each with
   * the request's metadata.
   */
  static List<Received> counting(int count, String metadata) {
    return IntStream.range(0, count)
        .mapToObj(i -> Received.of(Integer.toString(i), metadata))
        .toList();
  }

  /**
   * A recognisable text of exactly {@code length} characters: decimal positions separated by
   * commas, so a lost, duplicated or reordered fragment changes it.
   */
  static String pattern(String tag, int length) {
    StringBuilder b = new StringBuilder(length + 16).append(tag).append(':');
    for (int i = 0; b.length() < length; i++) {
      b.append(i).append(',');
    }
    b.setLength(length);
    return b.toString();
  }

  /** Polls {@code condition} every 10 ms until it holds, failing after {@link #TIMEOUT}. */
  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + TIMEOUT + " waiting for " + what);
      }
      Thread.sleep(10);
    }
  }
}
