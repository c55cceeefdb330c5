package io.millrace.core.internal.signatures;

/** Classes that {@code SignaturesTest} loads in a loader of its own. */
final class Fixtures {
  private Fixtures() {}
}

/** Names {@link OnlyInASignature} in a signature, and nowhere else. */
final class NamesOne {
  OnlyInASignature make() {
    return null;
  }

  void take(OnlyInAParameter p) {}
}

/** Loaded only because a signature names it. */
final class OnlyInASignature {}

/** Loaded only because a parameter's type names it. */
final class OnlyInAParameter {}

/** Names a class that its loader cannot find. */
final class NamesAMissingOne {
  Missing make() {
    return null;
  }
}

/** Refused by the test's loader: stands for an optional dependency that is absent. */
final class Missing {}
