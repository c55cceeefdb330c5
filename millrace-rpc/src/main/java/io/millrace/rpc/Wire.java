package io.millrace.rpc;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Pieces shared by the RPC metadata codecs: unsigned varints (protobuf's base-128 encoding, at most
 * ten bytes) and header lists. Readers check every length against what remains, so a malformed or
 * hostile block fails with {@link MalformedMetadataException}, never with an out-of-bounds read or
 * an allocation larger than the block.
 */
final class Wire {
  private Wire() {}

  /** Version in the top three bits of a metadata block's first byte; flags in the low five. */
  static final int VERSION_SHIFT = 5;

  static final int FLAGS_MASK = 0x1F;

  static int firstByte(int version, int flags) {
    return version << VERSION_SHIFT | flags;
  }

  static void writeVarint(ByteBuf out, long value) {
    while ((value & ~0x7FL) != 0) {
      out.writeByte((int) (value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out.writeByte((int) value);
  }

  static long readVarint(ByteBuf in) {
    long value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!in.isReadable()) {
        throw new MalformedMetadataException("a varint runs past the end");
      }
      int b = in.readByte();
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new MalformedMetadataException("a varint longer than ten bytes");
  }

  /** A varint that must be a length of at most what remains readable in {@code in}. */
  static int readLength(ByteBuf in, String what) {
    long n = readVarint(in);
    if (n < 0 || n > in.readableBytes()) {
      throw new MalformedMetadataException(what + " length " + n + " runs past the end");
    }
    return (int) n;
  }

  static void writeBytes(ByteBuf out, byte[] bytes) {
    writeVarint(out, bytes.length);
    out.writeBytes(bytes);
  }

  static void writeUtf8(ByteBuf out, String s) {
    writeBytes(out, s.getBytes(StandardCharsets.UTF_8));
  }

  static String readUtf8(ByteBuf in, String what) {
    int n = readLength(in, what);
    String s = in.toString(in.readerIndex(), n, StandardCharsets.UTF_8);
    in.skipBytes(n);
    return s;
  }

  /** A header list: varint count, then each key and value with a varint length. */
  static void writeHeaders(ByteBuf out, Headers headers) {
    writeVarint(out, headers.size());
    for (int i = 0; i < headers.size(); i++) {
      String key = headers.keyAt(i);
      writeVarint(out, key.length());
      out.writeCharSequence(key, StandardCharsets.US_ASCII);
      writeBytes(out, headers.valueAt(i));
    }
  }

  /**
   * Reads a header list; fails with {@link HeadersTooLargeException} past {@code maxBytes} of keys
   * and values (checked before each value is copied).
   */
  static Headers readHeaders(ByteBuf in, int maxBytes) {
    long count = readVarint(in);
    if (count < 0 || count > in.readableBytes() / 2) { // each entry takes at least two bytes
      throw new MalformedMetadataException("header count " + count + " runs past the end");
    }
    Headers headers = new Headers();
    long total = 0;
    for (long i = 0; i < count; i++) {
      int keyLength = readLength(in, "header key");
      if (total + keyLength + Headers.ENTRY_OVERHEAD > maxBytes) {
        throw new HeadersTooLargeException(maxBytes); // before a String is made of the key
      }
      String key = in.toString(in.readerIndex(), keyLength, StandardCharsets.US_ASCII);
      in.skipBytes(keyLength);
      int valueLength = readLength(in, "header value");
      total += keyLength + valueLength + Headers.ENTRY_OVERHEAD;
      if (total > maxBytes) {
        throw new HeadersTooLargeException(maxBytes);
      }
      byte[] value = new byte[valueLength];
      in.readBytes(value);
      try {
        headers.addReceived(key, value);
      } catch (IllegalArgumentException e) {
        throw new MalformedMetadataException(e.getMessage());
      }
    }
    return headers;
  }

  /** Metadata that does not follow the format: the call fails with INTERNAL. */
  static final class MalformedMetadataException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MalformedMetadataException(String message) {
      super(message, null, false, false);
    }
  }

  /** Headers past the receiver's limit: the call fails with RESOURCE_EXHAUSTED. */
  static final class HeadersTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HeadersTooLargeException(int maxBytes) {
      super("headers exceed the limit of " + maxBytes + " bytes", null, false, false);
    }
  }
}
