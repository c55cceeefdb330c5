package io.millrace.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a buffer leak while it ran.
 *
 * <p>Registered for every test through JUnit's extension auto-detection (see this module's {@code
 * META-INF/services} and {@code junit-platform.properties}). After each class it collects garbage
 * and allocates a few buffers, which is when Netty's detector looks for unreleased buffers, then
 * asserts that no leak was reported.
 */
public final class LeakCheckExtension implements AfterAllCallback {

  @Override
  public void afterAll(ExtensionContext context) throws InterruptedException {
    check(context.getDisplayName());
  }

  /**
   * Collects garbage, lets Netty's detector look, and throws an AssertionError naming {@code what}
   * if a leak was reported since the last check. Shared with the TestNG listener.
   */
  static void check(String what) throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(20);
      poke();
    }
    List<String> leaks = RecordingLeakDetector.drain();
    if (!leaks.isEmpty()) {
      throw new AssertionError(
          leaks.size()
              + " buffer leak(s) reported while running "
              + what
              + ":\n"
              + String.join("\n", leaks));
    }
  }

  /**
   * Each tracked allocation makes the detector drain its queue of collected, unreleased buffers.
   */
  private static void poke() {
    ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(8);
    pooled.release();
    ByteBuf heap = UnpooledByteBufAllocator.DEFAULT.heapBuffer(8);
    heap.release();
  }
}
