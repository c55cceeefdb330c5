package io.millrace.bench.grpc;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * Marshals raw {@code byte[]} payloads, so grpc-java pays no serialization cost beyond its
 * transport's: outbound, the array is handed over as a {@link KnownLength} {@link Drainable} stream
 * that gRPC's framer writes in one call, without an intermediate copy buffer; inbound, the message
 * (a {@link KnownLength} stream over the received buffers) is read once into an array of its exact
 * size. The arrays are never modified, so one array may be sent many times.
 */
final class BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
  static final BytesMarshaller INSTANCE = new BytesMarshaller();

  private static final byte[] EMPTY = new byte[0];

  private BytesMarshaller() {}

  @Override
  public InputStream stream(byte[] value) {
    return new BytesStream(value);
  }

  @Override
  public byte[] parse(InputStream stream) {
    try {
      if (!(stream instanceof KnownLength)) {
        return stream.readAllBytes();
      }
      int length = stream.available();
      if (length == 0) {
        return EMPTY;
      }
      byte[] bytes = new byte[length];
      int read = 0;
      while (read < length) {
        int n = stream.read(bytes, read, length - read);
        if (n < 0) {
          throw new IOException("message ended after " + read + " of " + length + " bytes");
        }
        read += n;
      }
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A stream over a byte array that gRPC can size and drain into its output buffer directly (unlike
   * {@link java.io.ByteArrayInputStream}, unsynchronized: gRPC reads it on one thread).
   */
  private static final class BytesStream extends InputStream implements KnownLength, Drainable {
    private final byte[] bytes;
    private int position;

    BytesStream(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int available() {
      return bytes.length - position;
    }

    @Override
    public int read() {
      return position < bytes.length ? bytes[position++] & 0xff : -1;
    }

    @Override
    public int read(byte[] target, int offset, int length) {
      Objects.checkFromIndexSize(offset, length, target.length);
      if (length == 0) {
        return 0;
      }
      int n = Math.min(length, bytes.length - position);
      if (n <= 0) {
        return -1;
      }
      System.arraycopy(bytes, position, target, offset, n);
      position += n;
      return n;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int length = bytes.length - position;
      target.write(bytes, position, length);
      position = bytes.length;
      return length;
    }
  }
}
