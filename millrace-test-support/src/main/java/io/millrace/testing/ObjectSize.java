package io.millrace.testing;

import java.lang.management.ManagementFactory;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Assumptions;

/**
 * The bytes one object of a kind takes on the heap, measured by the current thread's allocation
 * counter: for tests that pin the size of an object made per call, where eight bytes more on each
 * side of every call set how often a small heap's collector runs.
 */
public final class ObjectSize {
  private ObjectSize() {}

  /** Where the objects are kept, so that none can be optimized away. */
  private static volatile Object[] kept;

  /**
   * The bytes each object {@code make} returns takes (it must allocate that object and nothing
   * else). Skips the test unless the JVM lays objects out as the sizes in this project's comments
   * assume: compressed pointers and a 12-byte header (not JDK 24's compact headers).
   */
  public static long of(IntFunction<Object> make) {
    Assumptions.assumeTrue(
        vmOption("UseCompressedOops") && vmOption("UseCompressedClassPointers"),
        "sizes are for compressed pointers");
    Assumptions.assumeFalse(vmOption("UseCompactObjectHeaders"), "sizes are for 12-byte headers");
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(
        threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
        "the JVM counts each thread's allocation");
    int n = 4096;
    Object[] keep = new Object[n];
    kept = keep;
    for (int i = 0; i < n; i++) {
      keep[i] = make.apply(i); // classes loaded, counters warm
    }
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < n; i++) {
      keep[i] = make.apply(i);
    }
    long after = threads.getCurrentThreadAllocatedBytes();
    kept = null;
    return (after - before) / n;
  }

  private static boolean vmOption(String name) {
    try {
      com.sun.management.HotSpotDiagnosticMXBean hotspot =
          ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
      return Boolean.parseBoolean(hotspot.getVMOption(name).getValue());
    } catch (IllegalArgumentException noSuchOption) {
      return false; // (UseCompactObjectHeaders before JDK 24)
    }
  }
}
