package io.millrace.core.internal;

/**
 * Which throwables from application code (a subscriber, a handler, an encoder) are its failure, to
 * be told to whoever waits on it, and which are the JVM's own, to be let through.
 */
public final class Failures {
  private Failures() {}

  /**
   * Whether {@code t} says the JVM itself is failing (out of memory, an internal error) or the
   * thread is being stopped: rethrow it, do not tell it as a call's failure. Everything else is the
   * application's: its runtime exceptions, a checked exception thrown without being declared
   * (Kotlin, Lombok's {@code @SneakyThrows}), an assertion, a class it could not link and a stack
   * overflow, which is its own recursion's.
   */
  @SuppressWarnings("removal") // ThreadDeath: what Thread.stop throws, on the JDKs that still do
  public static boolean fatal(Throwable t) {
    return (t instanceof VirtualMachineError && !(t instanceof StackOverflowError))
        || t instanceof ThreadDeath;
  }

  /**
   * Throws {@code t} on when it is {@link #fatal} (an Error, so no one need declare it); returns
   * when it is the application's failure, for the caller to tell.
   */
  public static void throwIfFatal(Throwable t) {
    if (fatal(t)) {
      throw (Error) t;
    }
  }
}
