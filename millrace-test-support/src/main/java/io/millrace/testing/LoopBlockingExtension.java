package io.millrace.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingMethod;
import reactor.blockhound.BlockingOperationError;

/**
 * Fails a test when Millrace's code blocked a Netty event loop while it ran: a sleep, a wait, a
 * park on a lock or a condition, blocking file or socket I/O. One blocked loop stalls every
 * connection on it, and no timing test notices a 20 ms stall.
 *
 * <p>Detection is BlockHound's: it instruments the JDK's blocking methods and calls back when one
 * runs on a thread marked non-blocking; Netty's own integration (found by BlockHound through {@code
 * ServiceLoader}) marks Netty's event-loop threads so, and allows Netty's internal waits. A call
 * counts when Millrace's code ({@code io.millrace}, this package aside) made it, directly or
 * through the JDK: a peer's library blocking on its own loop in an interop test, or the TCK's
 * subscribers queueing what they receive, are not ours to judge. Logging to the console is allowed
 * (it is how the engine reports, rarely). The blocking call then throws {@link
 * BlockingOperationError}, as BlockHound does, and the test fails after it, with the stack.
 *
 * <p>Registered for every test through JUnit's extension auto-detection, like {@link
 * LeakCheckExtension}. Needs {@code -XX:+AllowRedefinitionToAddDeleteMethods} on JDK 13+ (the
 * build's argLine has it); without it BlockHound refuses to install and this says so on stderr.
 */
public final class LoopBlockingExtension implements AfterEachCallback, AfterAllCallback {
  private static final Queue<String> BLOCKED = new ConcurrentLinkedQueue<>();
  private static final ThreadLocal<Boolean> ON_PURPOSE = new ThreadLocal<>();
  private static final boolean INSTALLED = install();

  private static boolean install() {
    try {
      BlockHound.builder()
          .loadIntegrations() // Netty's and Reactor's, through ServiceLoader
          .allowBlockingCallsInside("java.util.logging.StreamHandler", "publish")
          .allowBlockingCallsInside("java.util.logging.StreamHandler", "flush")
          .allowBlockingCallsInside("java.util.logging.ConsoleHandler", "publish")
          .allowBlockingCallsInside("java.lang.Throwable", "printStackTrace")
          .blockingMethodCallback(LoopBlockingExtension::blocked)
          .install();
      return true;
    } catch (RuntimeException | Error e) {
      System.err.println("loop-blocking detection is off: BlockHound did not install: " + e);
      return false;
    }
  }

  /** Whether blocking calls on event loops are being detected in this JVM. */
  public static boolean installed() {
    return INSTALLED;
  }

  private static void blocked(BlockingMethod method) {
    if (ON_PURPOSE.get() != null) {
      return; // a test that holds a loop to make work pile up
    }
    StackTraceElement[] stack = new Throwable().getStackTrace();
    if (!calledByMillrace(stack)) {
      return; // let it block: not Millrace's call
    }
    StringBuilder report =
        new StringBuilder().append(method).append(" on ").append(Thread.currentThread().getName());
    for (StackTraceElement frame : stack) {
      report.append("\n\tat ").append(frame);
    }
    BLOCKED.add(report.toString());
    throw new BlockingOperationError(method);
  }

  /**
   * Whether the blocking call was made by Millrace's code: the first frame below the JDK's own (and
   * BlockHound's, and this class's) is Millrace's. A library that blocks on a loop while Millrace
   * calls it (the TCK's test subscribers queue what they receive) is that library's doing.
   */
  private static boolean calledByMillrace(StackTraceElement[] stack) {
    for (StackTraceElement frame : stack) {
      String c = frame.getClassName();
      if (c.startsWith("java.")
          || c.startsWith("jdk.")
          || c.startsWith("sun.")
          || c.startsWith("reactor.blockhound.")
          || c.startsWith("io.millrace.testing.")) {
        continue;
      }
      return c.startsWith("io.millrace.");
    }
    return false;
  }

  /** Blocks as a test means to, for example to hold a loop while calls pile up: not reported. */
  public interface Blocking {
    void run() throws InterruptedException;
  }

  /** Runs {@code blocking} on this thread, a loop perhaps, without reporting what blocks in it. */
  public static void onPurpose(Blocking blocking) throws InterruptedException {
    ON_PURPOSE.set(Boolean.TRUE);
    try {
      blocking.run();
    } finally {
      ON_PURPOSE.remove();
    }
  }

  /**
   * The blocking calls recorded since the last call, forgotten now: for a test that blocks a loop
   * on purpose to check that it is caught.
   */
  public static List<String> drain() {
    List<String> out = new ArrayList<>();
    for (String s; (s = BLOCKED.poll()) != null; ) {
      out.add(s);
    }
    return out;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    failIfBlocked(context);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    failIfBlocked(context); // a class's own teardown
  }

  private static void failIfBlocked(ExtensionContext context) {
    List<String> blocked = drain();
    if (!blocked.isEmpty()) {
      throw new AssertionError(
          blocked.size()
              + " blocking call(s) on a Netty event loop while running "
              + context.getDisplayName()
              + ":\n"
              + String.join("\n", blocked));
    }
  }
}
