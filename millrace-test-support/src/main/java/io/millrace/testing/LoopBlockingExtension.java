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
 * counts when Millrace's code ({@code io.millrace}, this package aside) is on the stack, so a
 * library that Millrace calls and that blocks counts too; blocking by the TCK's or TestNG's own
 * code, and by a peer's library on its own loop in an interop test, is not ours to judge. Logging
 * to the console is allowed (it is how the engine reports, rarely). The blocking call then throws
 * {@link BlockingOperationError}, as BlockHound does, and the test fails after it, with the stack;
 * a wait for a lock or a condition is reported without the throw, which would break the lock.
 *
 * <p>Registered for every test through JUnit's extension auto-detection, like {@link
 * LeakCheckExtension}. Needs {@code -XX:+AllowRedefinitionToAddDeleteMethods} on JDK 13+ (the
 * build's argLine has it); without it BlockHound refuses to install, and every test fails saying so
 * unless {@code -Dmillrace.loopBlocking.off=true} (a run that knowingly goes without).
 *
 * <p>Limits: reports go to the JUnit test running when the blocking call happened (a call during a
 * class's teardown to its {@code afterAll}); TestNG tests (the TCK) are not checked afterwards,
 * though the blocking call still throws there; BlockHound sees parks, sleeps, waits and blocking
 * I/O, not contention on {@code synchronized}.
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
          // Handing a task to an executor the user gave (a handler executor) takes that
          // executor's queue lock for an instant: the hand-off is how work leaves the loop.
          .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
          .allowBlockingCallsInside("java.util.concurrent.ForkJoinPool", "execute")
          .allowBlockingCallsInside("java.util.concurrent.ThreadPerTaskExecutor", "execute")
          // Cancelling a scheduled task (a handler's Flux.interval cancelled by the requester's
          // CANCEL) takes its scheduler's queue lock for an instant to take the task out.
          .allowBlockingCallsInside(
              "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask", "cancel")
          // Shutting a timer executor down once a client's loops have terminated (on Netty's
          // global executor, which completes the loops' termination) takes that executor's queue
          // lock for an instant, as execute does; its timer thread may hold it just then.
          .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "shutdownNow")
          // Netty's integration allows the pooled allocator's arena and chunk locks but not the
          // adaptive allocator's: when two loops contend for its magazines it grows them under a
          // StampedLock held for an array swap (seen on a frame batch's ensureWritable).
          .allowBlockingCallsInside(
              "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
          .allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free")
          // grpc-java's blocking stub hands each message of a stream to the reading thread through
          // a lock-guarded queue; run on the loop (a call without an executor, as with grpc-java's
          // directExecutor), that lock is contended only for as long as the reader's take() holds
          // it.
          .allowBlockingCallsInside(
              "io.grpc.stub.ClientCalls$BlockingResponseStream$QueuingListener", "onMessage")
          .allowBlockingCallsInside(
              "io.grpc.stub.ClientCalls$BlockingResponseStream$QueuingListener", "onClose")
          // With Micrometer's context-propagation on the classpath (as in Spring applications),
          // Reactor loads its ContextRegistry, a ServiceLoader scan of the jars, the first time a
          // Flux or Mono is wrapped: once per JVM, on whichever thread gets there first.
          .allowBlockingCallsInside("io.micrometer.context.ContextRegistry", "loadContextAccessors")
          .allowBlockingCallsInside(
              "io.micrometer.context.ContextRegistry", "loadThreadLocalAccessors")
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
    if (ON_PURPOSE.get() == Boolean.TRUE) {
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
    if (waitForALock(stack)) {
      return; // reported; let it wait (see waitForALock)
    }
    throw new BlockingOperationError(method);
  }

  /**
   * Whether the blocking call is a wait for a lock, or for a condition of one: a park inside a
   * {@code ReentrantLock}, {@code ReentrantReadWriteLock}, {@code StampedLock} or a condition's
   * {@code await}. On JDK 17 throwing there leaves the thread's node in the lock's queue: the next
   * release wakes that node instead of the thread behind it, which then waits forever. One such
   * throw on the loop cancelling a {@code Flux.interval} left Reactor's parallel scheduler with a
   * worker that never woke, and every later interval in the JVM silent (a test hung waiting for its
   * first payload). Such a call is recorded and fails the test all the same; it just waits as it
   * would without the detector. A blocking queue's {@code put} and {@code take} wait on a lock and
   * its conditions, so they are reported the same way. Other waits (a latch, a semaphore, a
   * future's {@code get}, Reactor's {@code block()}) still throw: on the loop they are usually a
   * wait for work only the loop can do, which would never end.
   */
  private static boolean waitForALock(StackTraceElement[] stack) {
    for (StackTraceElement frame : stack) {
      String c = frame.getClassName();
      if (c.startsWith("java.util.concurrent.locks.ReentrantLock")
          || c.startsWith("java.util.concurrent.locks.ReentrantReadWriteLock")
          || c.startsWith("java.util.concurrent.locks.StampedLock")
          || c.endsWith("QueuedSynchronizer$ConditionObject")
          || c.endsWith("QueuedLongSynchronizer$ConditionObject")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether Millrace's code is behind the blocking call: a frame of Millrace's is on the stack (so
   * a library that Millrace calls and that blocks, Reactor's {@code block()} for one, counts),
   * unless the code that blocked is the TCK's or TestNG's (their test subscribers queue what they
   * receive, under a lock).
   */
  private static boolean calledByMillrace(StackTraceElement[] stack) {
    boolean first = true;
    for (StackTraceElement frame : stack) {
      String c = frame.getClassName();
      if (isJdk(c) || c.startsWith("reactor.blockhound.") || c.startsWith("io.millrace.testing.")) {
        continue;
      }
      if (first && (c.startsWith("org.reactivestreams.tck.") || c.startsWith("org.testng."))) {
        return false;
      }
      first = false;
      if (c.startsWith("io.millrace.")) {
        return true;
      }
    }
    return false;
  }

  private static boolean isJdk(String c) {
    return c.startsWith("java.")
        || c.startsWith("javax.")
        || c.startsWith("jdk.")
        || c.startsWith("sun.")
        || c.startsWith("com.sun.");
  }

  /** Blocks as a test means to, for example to hold a loop while calls pile up: not reported. */
  public interface Blocking {
    void run() throws InterruptedException;
  }

  /** Runs {@code blocking} on this thread, a loop perhaps, without reporting what blocks in it. */
  public static void onPurpose(Blocking blocking) throws InterruptedException {
    Boolean outer = ON_PURPOSE.get();
    ON_PURPOSE.set(Boolean.TRUE);
    try {
      blocking.run();
    } finally {
      ON_PURPOSE.set(outer); // (nested: the outer call's setting stays)
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
    if (!INSTALLED && !Boolean.getBoolean("millrace.loopBlocking.off")) {
      throw new AssertionError(
          "blocking on event loops is not being detected: BlockHound did not install (see stderr;"
              + " -Dmillrace.loopBlocking.off=true runs without it)");
    }
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
