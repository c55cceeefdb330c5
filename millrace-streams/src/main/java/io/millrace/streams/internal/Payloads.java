package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.millrace.core.internal.Failures;
import io.millrace.frame.LentFrameBuffer;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/** Conversions from the engine's borrowed buffers to the streams' payloads. */
public final class Payloads {
  /**
   * Whether Netty copies raw memory with sun.misc.Unsafe (JDK 17; on JDK 24+ without
   * --sun-misc-unsafe-memory-access=allow it has no Unsafe, while buffers still report addresses).
   */
  private static final boolean UNSAFE_COPY = PlatformDependent.hasUnsafe();

  private Payloads() {}

  /**
   * A payload the receiver owns, from buffers the engine lends for the duration of a callback: heap
   * copies, or retained views when {@code zeroCopy}.
   */
  public static Payload received(ByteBuf metadata, ByteBuf data, boolean zeroCopy) {
    if (zeroCopy) {
      return Payload.of(metadata == null ? null : metadata.retainedSlice(), data.retainedSlice());
    }
    return Payload.received(
        metadata == null ? null : Unpooled.wrappedBuffer(heapBytes(metadata)), heapBytes(data));
  }

  /**
   * Hands {@code p} to {@code stream} (the engine may fail the stream, and call back, at once). A
   * payload that cannot even be handed over (a lent one whose buffers are gone, an encoder's error
   * thrown here) fails the stream instead, and false says so. Loop only.
   */
  public static boolean sendOrFail(Payload p, Stream stream) {
    try {
      p.sendOn(stream);
      return true;
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      failUnsent(stream, e);
      return false;
    }
  }

  /** {@code stream} could not be handed a payload ({@link #sendOrFail}): it fails. Loop only. */
  static void failUnsent(Stream stream, Throwable e) {
    if (!stream.isOutboundDone()) {
      stream.fail(e);
    }
  }

  private static final byte[] NO_BYTES = new byte[0];

  private static byte[] heapBytes(ByteBuf b) {
    int n = b.readableBytes();
    if (n == 0) {
      return NO_BYTES;
    }
    byte[] bytes = new byte[n];
    copyReadable(b, bytes, 0);
    return bytes;
  }

  /**
   * Copies {@code b}'s readable bytes into {@code dst} at {@code at}, leaving {@code b}'s indexes
   * as they are. A frame lent by a transport gives its address without checks ({@link
   * LentFrameBuffer#lentAddress}); another buffer with one liveness check (memoryAddress) where
   * {@code getBytes} checks each layer of a received slice, its parent and the chunk: that was a
   * third of a stream consumer's time at 8 bytes, and a quarter of a unary RPC server's.
   */
  public static void copyReadable(ByteBuf b, byte[] dst, int at) {
    long base = UNSAFE_COPY && b instanceof LentFrameBuffer lent ? lent.lentAddress() : 0;
    if (base == 0 && UNSAFE_COPY && b.hasMemoryAddress()) {
      base = b.memoryAddress();
    }
    if (base != 0) {
      int length = b.readableBytes();
      Objects.checkFromIndexSize(at, length, dst.length);
      long address = base + b.readerIndex();
      if (length < SMALL_COPY && UNALIGNED) {
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
          LONGS.set(dst, at + i, PlatformDependent.getLong(address + i));
        }
        for (; i < length; i++) {
          dst[at + i] = PlatformDependent.getByte(address + i);
        }
      } else {
        PlatformDependent.copyMemory(address, dst, at, length);
      }
    } else {
      b.getBytes(b.readerIndex(), dst, at, b.readableBytes());
    }
  }

  /**
   * Copies shorter than this go word by word in Java: {@code Unsafe.copyMemory} calls a copy stub
   * that took 6-7 ns for 3 to 24 bytes against 2-3 ns for the loop (JDK 17, one core of this
   * machine; at 32 bytes and up the stub is as fast or faster).
   */
  private static final int SMALL_COPY = 32;

  /** Whether raw eight-byte reads and writes may be unaligned here (x86 and aarch64: yes). */
  private static final boolean UNALIGNED = PlatformDependent.isUnaligned();

  /** Eight bytes of an array at any index, in the platform's order (as Unsafe reads memory). */
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

  /**
   * Copies {@code length} bytes of {@code src} from {@code srcIndex} into {@code dst} at {@code
   * index}, leaving {@code dst}'s indexes as they are. Both ranges are checked, and so is the
   * liveness of the memory {@code dst} stands on (a derived buffer's own count is the caller's to
   * keep: the frame writers own theirs); a read-only buffer refuses the write. Into native memory
   * with one raw copy: Netty 4.2's {@code setBytes} from an array goes through a method handle to
   * {@code ByteBuffer.put}, which C2 does not always inline, and in the runs where it did not, that
   * copy of a few bytes took a tenth of a unary RPC caller's time (docs/benchmarks.md).
   */
  public static void copyInto(byte[] src, int srcIndex, ByteBuf dst, int index, int length) {
    if (UNSAFE_COPY && dst.hasMemoryAddress() && !dst.isReadOnly()) {
      if ((srcIndex | index | length) < 0
          || length > src.length - srcIndex
          || length > dst.capacity() - index) {
        throw new IndexOutOfBoundsException(
            "copying "
                + length
                + " bytes from "
                + srcIndex
                + " of "
                + src.length
                + " to "
                + index
                + " of "
                + dst.capacity());
      }
      copyToAddress(src, srcIndex, dst.memoryAddress() + index, length);
    } else {
      dst.setBytes(index, src, srcIndex, length);
    }
  }

  /**
   * Copies {@code length} bytes of {@code src} from {@code srcIndex} to native memory at {@code
   * address}, which the caller vouches for (a frame writer's batch, with the room made): the source
   * range is checked, the destination is not. As {@link #copyInto} copies.
   */
  public static void copyToAddress(byte[] src, int srcIndex, long address, int length) {
    Objects.checkFromIndexSize(srcIndex, length, src.length);
    if (length < SMALL_COPY && UNALIGNED) {
      int i = 0;
      for (; i + Long.BYTES <= length; i += Long.BYTES) {
        PlatformDependent.putLong(address + i, (long) LONGS.get(src, srcIndex + i));
      }
      for (; i < length; i++) {
        PlatformDependent.putByte(address + i, src[srcIndex + i]);
      }
    } else {
      PlatformDependent.copyMemory(src, srcIndex, address, length);
    }
  }

  /**
   * Subscribes to {@code source} only to cancel it: nobody will read it (a payload that comes all
   * the same is released).
   */
  public static void cancelUnread(org.reactivestreams.Publisher<?> source) {
    source.subscribe(CANCELLING);
  }

  /** Cancels what it is subscribed to and releases the payloads that come anyway. Stateless. */
  private static final org.reactivestreams.Subscriber<Object> CANCELLING =
      new org.reactivestreams.Subscriber<>() {
        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
          s.cancel();
        }

        @Override
        public void onNext(Object o) {
          if (o instanceof Payload p) {
            p.release();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onComplete() {}
      };
}
