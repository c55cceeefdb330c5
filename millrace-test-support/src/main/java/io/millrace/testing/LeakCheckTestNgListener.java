package io.millrace.testing;

import org.testng.IClassListener;
import org.testng.IInvokedMethod;
import org.testng.IInvokedMethodListener;
import org.testng.ITestClass;
import org.testng.ITestResult;

/**
 * {@link LeakCheckExtension} for TestNG classes (the Reactive Streams TCK's), which JUnit's
 * extensions do not reach: a leak Netty reported while a class ran fails the run, naming the class.
 * The check comes after the class's own teardown (TestNG tells class listeners of a class's end
 * before its {@code @AfterClass} methods run, which may close the connections whose buffers leak):
 * after each {@code @AfterClass} method, whose result it then marks failed, or at the class's end
 * when it has none. Registered through TestNG's service loading ({@code
 * META-INF/services/org.testng.ITestNGListener}).
 */
public final class LeakCheckTestNgListener implements IClassListener, IInvokedMethodListener {

  @Override
  public void onBeforeClass(ITestClass testClass) {}

  @Override
  public void onAfterClass(ITestClass testClass) {
    if (testClass.getAfterClassMethods().length == 0) {
      check(testClass.getName()); // thrown: the run fails
    }
  }

  @Override
  public void afterInvocation(IInvokedMethod method, ITestResult result) {
    if (method.getTestMethod().isAfterClassConfiguration()) {
      try {
        check(method.getTestMethod().getTestClass().getName());
      } catch (AssertionError e) {
        result.setStatus(ITestResult.FAILURE);
        result.setThrowable(e);
      }
    }
  }

  private static void check(String what) {
    try {
      LeakCheckExtension.check(what);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while looking for leaks in " + what, e);
    }
  }
}
