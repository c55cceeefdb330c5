package io.millrace.testing;

import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;

/**
 * A Netty leak detector that remembers every leak it reports, so that {@link LeakCheckExtension}
 * can fail the test run instead of leaving a log line nobody reads.
 *
 * <p>Installed by the build through {@code -Dio.netty.customResourceLeakDetector}; Netty creates
 * one instance per tracked resource type (ByteBuf among them) through the public constructor.
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
  private static final List<String> LEAKS = new ArrayList<>();

  public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
    super(resourceType, samplingInterval);
  }

  /** Kept for Netty versions that look up the three-argument constructor. */
  public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
    this(resourceType, samplingInterval);
  }

  @Override
  protected void reportTracedLeak(String resourceType, String records) {
    super.reportTracedLeak(resourceType, records);
    record("LEAK: " + resourceType + records);
  }

  @Override
  protected void reportUntracedLeak(String resourceType) {
    super.reportUntracedLeak(resourceType);
    record("LEAK: " + resourceType + " (untraced)");
  }

  private static void record(String report) {
    synchronized (LEAKS) {
      LEAKS.add(report);
    }
  }

  /** Returns and forgets the leaks reported so far. */
  public static List<String> drain() {
    synchronized (LEAKS) {
      List<String> copy = new ArrayList<>(LEAKS);
      LEAKS.clear();
      return copy;
    }
  }
}
