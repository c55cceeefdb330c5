package io.millrace.core.internal;

/**
 * Resolves, ahead of the JIT, the classes that a class's methods name in their signatures, for that
 * class.
 *
 * <p>Why. C2 does not inline a call when the callee's signature names a class not yet resolved for
 * the callee's class ("unloaded signature classes" under {@code -XX:+PrintInlining}), and it does
 * not come back to it: the call stays a call in that compiled code, and an object passed to it
 * escapes. Two things leave such a class unresolved on a hot path. It may be loaded only by another
 * path (a channel's types on a server that has served only request-response so far). Or, on JDK 17,
 * where the security manager is allowed by default, it may belong to another jar that no class of
 * the callee's jar has named yet: each jar on the class path is a protection domain of its own, and
 * C2 asks whether the class is loaded for the callee's. Scans of the bench's processes found both
 * on per-call paths of every flavour and of the RPC layer (docs/benchmarks.md, thirty-seventh
 * session). Reflection resolves each class that a method names through the loader and protection
 * domain of the method's own class, which settles both.
 */
public final class Signatures {
  private Signatures() {}

  /**
   * Whether this runs in a native image, which has no C2 to help (and where reflection on a class
   * not registered for it may throw).
   */
  private static final boolean NATIVE_IMAGE =
      System.getProperty("org.graalvm.nativeimage.imagecode") != null;

  /**
   * Resolves what the declared methods and constructors of each of {@code classes} name. Only a
   * hint to the JIT: it never throws (bar the JVM's own errors), since it runs in static
   * initializers, where anything thrown would make the class unusable for good.
   */
  public static void resolve(Class<?>... classes) {
    if (NATIVE_IMAGE) {
      return;
    }
    for (Class<?> c : classes) {
      try {
        c.getDeclaredMethods();
        c.getDeclaredConstructors();
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) {
        // A class one of them names is absent (an optional dependency), or reflection is refused
        // (a security manager): left to the JIT, as without this.
      }
    }
  }
}
