package io.millrace.testing;

/**
 * Throws a checked exception without declaring it, as Kotlin code or Lombok's {@code @SneakyThrows}
 * does, so that a test can hand one to the library from a callback whose signature forbids it.
 */
public final class Undeclared {
  private Undeclared() {}

  /**
   * Throws {@code t} as it is; never returns. The return type fits any place: a statement, or an
   * expression of the type the callback must return ({@code return Undeclared.thrown(e);}).
   */
  public static <R> R thrown(Throwable t) {
    Undeclared.<RuntimeException>throwAs(t);
    throw new AssertionError("unreachable");
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> void throwAs(Throwable t) throws E {
    throw (E) t; // the cast is erased: t leaves as it is
  }
}
