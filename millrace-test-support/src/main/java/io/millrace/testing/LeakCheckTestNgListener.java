package io.millrace.testing;

import org.testng.IClassListener;
import org.testng.ITestClass;

/**
 * {@link LeakCheckExtension} for TestNG classes (the Reactive Streams TCK's), which JUnit's
 * extensions do not reach: after each class, a leak Netty reported while it ran fails the run.
 * Registered through TestNG's service loading ({@code
 * META-INF/services/org.testng.ITestNGListener}).
 */
public final class LeakCheckTestNgListener implements IClassListener {

  @Override
  public void onBeforeClass(ITestClass testClass) {}

  @Override
  public void onAfterClass(ITestClass testClass) {
    try {
      LeakCheckExtension.check(testClass.getName());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
