package io.millrace.streams;

import io.netty.buffer.ByteBuf;
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
  private final ByteBuf metadata;

  /** The data; null while it is only {@link #bytes} (a received copy, not yet asked for). */
  private ByteBuf data;

  /** The data of a {@link #received} payload until {@link #data()} wraps it; else null. */
  private final byte[] bytes;

  private Payload(ByteBuf metadata, ByteBuf data) {
    if (data == null) {
      throw new NullPointerException("data");
    }
    this.metadata = metadata;
    this.data = data;
    this.bytes = null;
  }

  private Payload(ByteBuf metadata, byte[] bytes) {
    if (bytes == null) {
      throw new NullPointerException("data");
    }
    this.metadata = metadata;
    this.bytes = bytes;
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
      d = bytes.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes);
      data = d;
    }
    return d;
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
    return data == null
        ? new String(bytes, StandardCharsets.UTF_8)
        : data.toString(StandardCharsets.UTF_8);
  }

  /** The metadata decoded as UTF-8, or null when there is none. */
  public String metadataUtf8() {
    return metadata == null ? null : metadata.toString(StandardCharsets.UTF_8);
  }

  /** A copy of the data's bytes. */
  public byte[] dataBytes() {
    if (data == null) {
      return bytes.clone();
    }
    byte[] copy = new byte[data.readableBytes()];
    data.getBytes(data.readerIndex(), copy);
    return copy;
  }

  /** Retains both buffers; returns this. */
  public Payload retain() {
    data().retain();
    if (metadata != null) {
      metadata.retain();
    }
    return this;
  }

  /** Releases both buffers (optional for payloads whose bytes are on the heap). */
  public void release() {
    if (data != null) {
      data.release(); // (data only in an array has nothing to release)
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
        + (data == null ? bytes.length : data.readableBytes())
        + " B]";
  }
}
