package io.millrace.testing;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayList;
import java.util.List;

/**
 * An unpooled allocator that remembers every buffer it hands out (composites included), so a test
 * can assert that Millrace, rsocket-java and the test itself released all of them.
 *
 * <p>Thread-safe: buffers may be allocated on an event loop and checked from the test thread. One
 * instance per test: {@link #assertAllReleased()} from an {@code @AfterEach} method fails the test
 * when a buffer is still referenced, after releasing it so that Netty's leak detector does not
 * report the same buffer again for the whole class.
 */
public final class TrackingAllocator extends AbstractByteBufAllocator {
  private final List<ByteBuf> allocated = new ArrayList<>();

  public TrackingAllocator() {
    super(false);
  }

  @Override
  protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
  }

  /**
   * With a memory address where the platform gives one, as Netty's own allocators' direct buffers
   * have: the engine writes frames into such a batch through raw stores, and that path is the one
   * to test.
   */
  @Override
  protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    return PlatformDependent.hasUnsafe()
        ? new UnpooledUnsafeDirectByteBuf(this, initialCapacity, maxCapacity)
        : new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
  }

  @Override
  public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
    return track(super.heapBuffer(initialCapacity, maxCapacity));
  }

  @Override
  public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
    return track(super.directBuffer(initialCapacity, maxCapacity));
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
    return track(super.compositeHeapBuffer(maxNumComponents));
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
    return track(super.compositeDirectBuffer(maxNumComponents));
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }

  /** How many buffers this allocator has handed out so far. */
  public synchronized int allocatedCount() {
    return allocated.size();
  }

  /** A new buffer holding {@code bytes}, owned by the caller. */
  public ByteBuf copyOf(byte[] bytes) {
    return buffer(bytes.length).writeBytes(bytes);
  }

  /**
   * Fails when any buffer handed out is still referenced; releases such buffers first so that one
   * failure is reported once.
   */
  public synchronized void assertAllReleased() {
    List<String> unreleased = new ArrayList<>();
    for (ByteBuf buf : allocated) {
      int refCnt = buf.refCnt();
      if (refCnt != 0) {
        unreleased.add(buf.getClass().getSimpleName() + " refCnt=" + refCnt);
        buf.release(refCnt);
      }
    }
    allocated.clear();
    if (!unreleased.isEmpty()) {
      throw new AssertionError(
          unreleased.size() + " buffer(s) not released: " + String.join(", ", unreleased));
    }
  }

  private synchronized <T extends ByteBuf> T track(T buf) {
    // Netty returns a shared, unreleasable empty buffer for a zero-capacity request.
    if (buf.maxCapacity() != 0) {
      allocated.add(buf);
    }
    return buf;
  }
}
