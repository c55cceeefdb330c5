package io.millrace.streams;

import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Signatures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * One RSocket payload: data and optional metadata.
 *
 * <p>Ownership. A payload given to Millrace (a request, or an item of a Publisher that Millrace
 * sends) belongs to Millrace from then on: its buffers are released once encoded, or when the call
 * fails or is cancelled. A payload Millrace delivers belongs to the receiver, and by default its
 * bytes are a copy on the Java heap ({@link StreamsOptions#zeroCopy()} off): keeping it pins no
 * network buffer, and dropping it without {@link #release()} leaks nothing, so reactive pipelines
 * that queue, buffer or switch threads need no reference counting. With zero-copy on, delivered
 * payloads are retained views of the receive buffer and must be released.
 *
 * <p>Not thread-safe; hand a payload from one thread to another through a happens-before edge, as
 * Reactive Streams signals do.
 */
public final class Payload {
  static {
    Signatures.resolve(Payload.class); // so that C2 may inline calls to their methods
  }

  private final ByteBuf metadata;

  /**
   * The data; null while it is only {@link #value}: a received copy, or an {@link #encoded}
   * payload's value, not yet asked for.
   */
  private ByteBuf data;

  /**
   * While {@link #encoder} is set, the value of an {@link #encoded} payload, until it is sent or
   * {@link #data()} encodes it; without an encoder, the byte array of a {@link #received} payload
   * (kept after {@link #data()} wraps it), or null. One field for both keeps a payload at 32 bytes,
   * not 40: a flavour makes one for every item it delivers.
   */
  private Object value;

  private PayloadEncoder<Object> encoder;

  /** Whether the buffers are only lent, for the duration of one callback ({@link #lent}). */
  private final boolean lent;

  private Payload(ByteBuf metadata, ByteBuf data) {
    this(metadata, data, false);
  }

  private Payload(ByteBuf metadata, ByteBuf data, boolean lent) {
    if (data == null) {
      throw new NullPointerException("data");
    }
    this.metadata = metadata;
    this.data = data;
    this.lent = lent;
  }

  private Payload(ByteBuf metadata, byte[] bytes) {
    if (bytes == null) {
      throw new NullPointerException("data");
    }
    this.metadata = metadata;
    this.value = bytes;
    this.lent = false;
  }

  @SuppressWarnings("unchecked")
  private Payload(ByteBuf metadata, Object value, PayloadEncoder<?> encoder) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    if (encoder == null) {
      throw new NullPointerException("encoder");
    }
    this.metadata = metadata;
    this.value = value;
    this.encoder = (PayloadEncoder<Object>) encoder;
    this.lent = false;
  }

  /** A payload of {@code data} without metadata (ownership taken). */
  public static Payload of(ByteBuf data) {
    return new Payload(null, data);
  }

  /** A payload of {@code metadata} (null: none) and {@code data} (ownership of both taken). */
  public static Payload of(ByteBuf metadata, ByteBuf data) {
    return new Payload(metadata, data);
  }

  /** A payload whose data is {@code data} in UTF-8, without metadata. */
  public static Payload of(String data) {
    return new Payload(null, utf8(data));
  }

  /** A payload of {@code metadata} (null: none) and {@code data}, both in UTF-8. */
  public static Payload of(String metadata, String data) {
    return new Payload(metadata == null ? null : utf8(metadata), utf8(data));
  }

  /** A payload whose data is {@code data} (not copied: do not change the array afterwards). */
  public static Payload of(byte[] data) {
    return new Payload(null, Unpooled.wrappedBuffer(data));
  }

  /**
   * A received payload's heap copy, as the flavours deliver it: {@code metadata} (null: none;
   * ownership taken) and {@code data}, which is wrapped in a buffer only when {@link #data()} is
   * first called, so a payload read as a string or as bytes, or not read, costs no buffer. Its one
   * owner reads it; handing it to another thread needs a happens-before edge, as Reactive Streams
   * signals give. (Payloads made with the other factories have their buffers from the start and may
   * be shared, with {@link #retain()}, across threads.)
   */
  public static Payload received(ByteBuf metadata, byte[] data) {
    return new Payload(metadata, data);
  }

  /**
   * A payload whose data is {@code value}, written by {@code encoder} straight into the outbound
   * frame when it is sent, so that it is encoded once, into the buffer that carries it ({@code
   * metadata}: null for none, ownership taken). {@code value} must not change afterwards. Asking
   * for {@link #data()} first encodes it into a buffer of its own.
   */
  public static <T> Payload encoded(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    return new Payload(metadata, value, encoder);
  }

  /**
   * Sends this payload as {@code stream}'s next one ({@link Stream#next(ByteBuf, ByteBuf)}); the
   * stream takes it over. An {@link #encoded} payload is written straight into the frame. On the
   * stream's event loop.
   */
  public void sendOn(Stream stream) {
    PayloadEncoder<Object> e = takeEncoder();
    if (e != null) {
      stream.next(metadata, takeValue(), e);
    } else {
      // A lent payload's buffers are their owner's: the stream gets references of its own.
      ByteBuf m = metadataToSend();
      stream.next(m, dataToSend(m));
    }
  }

  /**
   * Starts a request-response with this payload on {@code connection}, which takes it over ({@link
   * Connection#requestResponse(ByteBuf, ByteBuf, StreamListener)}); a {@link #lent} payload's
   * buffers stay their owner's (the connection gets references of its own). An {@link #encoded}
   * payload is written straight into the request frame.
   */
  public Stream requestResponseOn(Connection connection, StreamListener listener) {
    PayloadEncoder<Object> e = takeEncoder();
    if (e != null) {
      return connection.requestResponse(metadata, takeValue(), e, listener);
    }
    ByteBuf m = metadataToSend();
    return connection.requestResponse(m, dataToSend(m), listener);
  }

  /**
   * Starts a request-stream with this payload on {@code connection}, as {@link #requestResponseOn}
   * does.
   */
  public Stream requestStreamOn(
      Connection connection, long initialRequestN, StreamListener listener) {
    PayloadEncoder<Object> e = takeEncoder();
    if (e != null) {
      return connection.requestStream(metadata, takeValue(), e, initialRequestN, listener);
    }
    ByteBuf m = metadataToSend();
    return connection.requestStream(m, dataToSend(m), initialRequestN, listener);
  }

  /**
   * Whether this is an {@link #encoded} payload whose value is still to be written: sent, it goes
   * straight into the frame.
   */
  private boolean encodesWhenSent() {
    return encoder != null && data == null && !lent;
  }

  /**
   * The encoder of an {@link #encoded} payload not yet encoded, which is sent as its value from
   * here on ({@link #takeValue} next); else null.
   */
  private PayloadEncoder<Object> takeEncoder() {
    if (!encodesWhenSent()) {
      return null;
    }
    PayloadEncoder<Object> e = encoder;
    encoder = null;
    return e;
  }

  /** The metadata to hand over: references of the receiver's own when the payload is lent. */
  private ByteBuf metadataToSend() {
    return lent && metadata != null ? metadata.retainedSlice() : metadata;
  }

  /**
   * The data to hand over, as {@link #metadataToSend}; when it cannot be had (a lent payload's
   * buffers are gone), {@code metadataSent}, the metadata taken for the same hand-over, is released
   * if it was a reference of the receiver's own, and the failure thrown.
   */
  private ByteBuf dataToSend(ByteBuf metadataSent) {
    try {
      return lent ? data.retainedSlice() : data();
    } catch (RuntimeException e) {
      if (lent && metadataSent != null) {
        metadataSent.release();
      }
      throw e;
    }
  }

  private Object takeValue() {
    Object v = value;
    value = null;
    return v;
  }

  /**
   * A payload that only lends {@code metadata} (null: none) and {@code data}: they stay their
   * owner's, are valid until the callback that delivers the payload returns, and {@link #release()}
   * leaves them alone. For subscribers that read a payload in place and keep nothing of it ({@link
   * io.millrace.streams.internal.ReadsInPlace}); one that has to keep it copies what it needs.
   */
  public static Payload lent(ByteBuf metadata, ByteBuf data) {
    return new Payload(metadata, data, true);
  }

  /** An empty payload: no metadata, no data. */
  public static Payload empty() {
    return new Payload(null, Unpooled.EMPTY_BUFFER);
  }

  private static ByteBuf utf8(String s) {
    return s.isEmpty()
        ? Unpooled.EMPTY_BUFFER
        : Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8));
  }

  /** The data; its readable bytes are the payload's data. */
  public ByteBuf data() {
    ByteBuf d = data;
    if (d == null) {
      byte[] bytes = receivedBytes();
      if (bytes != null) {
        d = bytes.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes);
      } else if (encoder == null) {
        throw new IllegalStateException("this payload was sent or released: its data is gone");
      } else {
        d = encoder.toBuffer(value, ByteBufAllocator.DEFAULT);
        value = null;
        encoder = null;
      }
      data = d;
    }
    return d;
  }

  /** A received payload's heap copy of its data; null for any other payload. */
  private byte[] receivedBytes() {
    return encoder == null ? (byte[]) value : null;
  }

  /**
   * The payload's size in bytes: its metadata's and its data's readable bytes (an {@link #encoded}
   * value's as its encoder gives them, a received copy's as its array holds them). Meant for a
   * payload not yet sent or released.
   */
  public int length() {
    int m = metadata == null ? 0 : metadata.readableBytes();
    if (data != null) {
      return m + data.readableBytes();
    }
    if (encoder != null) {
      return m + encoder.length(value);
    }
    return value instanceof byte[] bytes ? m + bytes.length : m;
  }

  /** The metadata, or null when the payload has none (M flag clear). */
  public ByteBuf metadata() {
    return metadata;
  }

  public boolean hasMetadata() {
    return metadata != null;
  }

  /** The data decoded as UTF-8. */
  public String dataUtf8() {
    byte[] bytes = data == null ? receivedBytes() : null;
    return bytes != null
        ? new String(bytes, StandardCharsets.UTF_8)
        : data().toString(StandardCharsets.UTF_8);
  }

  /** The metadata decoded as UTF-8, or null when there is none. */
  public String metadataUtf8() {
    return metadata == null ? null : metadata.toString(StandardCharsets.UTF_8);
  }

  /** A copy of the data's bytes. */
  public byte[] dataBytes() {
    byte[] bytes = data == null ? receivedBytes() : null;
    if (bytes != null) {
      return bytes.clone();
    }
    ByteBuf d = data();
    byte[] copy = new byte[d.readableBytes()];
    d.getBytes(d.readerIndex(), copy);
    return copy;
  }

  /** Retains both buffers; returns this. A {@link #lent} payload cannot be kept this way. */
  public Payload retain() {
    if (lent) {
      throw new IllegalStateException("a lent payload's buffers are not its own: copy them");
    }
    data().retain();
    if (metadata != null) {
      metadata.retain();
    }
    return this;
  }

  /** Releases both buffers (optional for payloads whose bytes are on the heap). */
  public void release() {
    if (lent) {
      return; // the owner releases them
    }
    if (data != null) {
      data.release(); // (data only in an array or a value has nothing to release)
    }
    if (encoder != null) {
      value = null; // an encoded value not sent: dropped (a received array stays readable)
      encoder = null;
    }
    if (metadata != null) {
      metadata.release();
    }
  }

  @Override
  public String toString() {
    return "Payload[metadata="
        + (metadata == null ? "none" : metadata.readableBytes() + " B")
        + ", data="
        + (data != null
            ? data.readableBytes()
            : encoder != null ? encoder.length(value) : value != null ? ((byte[]) value).length : 0)
        + " B]";
  }
}
