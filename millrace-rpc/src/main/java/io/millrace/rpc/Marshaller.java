package io.millrace.rpc;

import io.millrace.core.PayloadEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** Turns a method's request or response messages into buffers and back. */
public interface Marshaller<T> {
  /** A new buffer from {@code alloc} holding {@code value}; the caller owns it. */
  ByteBuf serialize(T value, ByteBufAllocator alloc);

  /**
   * Reads a value from {@code data}'s readable bytes, leaving its indexes and reference count as
   * they were; the value must not keep {@code data} (it is released after this returns).
   *
   * @throws StatusException INTERNAL when the bytes are not a valid value
   */
  T parse(ByteBuf data);

  /**
   * An encoder that writes values straight into the outbound frame, or null (the default) to have
   * them {@link #serialize}d into a buffer of their own. The values it is given are written later,
   * on the connection's event loop, so it suits immutable values only (protobuf messages). Read
   * once per call, when the call starts; it must not throw.
   */
  default PayloadEncoder<T> encoder() {
    return null;
  }
}
