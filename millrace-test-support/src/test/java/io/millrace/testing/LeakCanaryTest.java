package io.millrace.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The canary: a test class that leaks a buffer on purpose must fail, or the leak check that every
 * test class of the build relies on has stopped working (a detector not installed, a level below
 * paranoid, an extension not registered). The leaking class runs through the JUnit launcher in this
 * JVM, with the build's leak detector; the canary asserts that it failed, and why.
 */
class LeakCanaryTest {

  /** Leaks one pooled buffer. Not picked up by the build's test scan (a nested class). */
  static class LeakingTest {
    @Test
    void leaksABuffer() {
      ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
      leaked.writeLong(42);
      // Never released: the reference is dropped and the buffer collected unreleased.
    }
  }

  /** Releases what it allocates: the control. */
  static class CleanTest {
    @Test
    void releasesItsBuffer() {
      ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(64);
      buf.release();
    }
  }

  private static List<Throwable> run(Class<?> testClass) {
    List<Throwable> failures = new ArrayList<>();
    Launcher launcher = LauncherFactory.create();
    launcher.execute(
        LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build(),
        new TestExecutionListener() {
          @Override
          public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            result.getThrowable().ifPresent(failures::add);
          }
        });
    return failures;
  }

  @Test
  void leakingTestClass_failsWithTheLeakReport() {
    assertThat(System.getProperty("io.netty.leakDetection.level")).isEqualTo("paranoid");
    List<Throwable> failures = run(LeakingTest.class);
    assertThat(failures).hasSize(1);
    assertThat(failures.get(0))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("buffer leak(s) reported while running")
        .hasMessageContaining("LeakingTest.leaksABuffer")
        .hasMessageContaining("LEAK: ByteBuf");
  }

  @Test
  void cleanTestClass_passes() {
    assertThat(run(CleanTest.class)).isEmpty();
  }
}
