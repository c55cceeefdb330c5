package io.millrace.core.internal.signatures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.internal.Signatures;
import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/**
 * {@link Signatures#resolve} loads what a class's methods name, for that class, before any call
 * does; and a class it cannot find leaves it quiet. (That C2 then inlines the calls is the JIT's
 * part, checked by the scan in docs/benchmarks.md, thirty-seventh session.)
 */
class SignaturesTest {
  private static final String PACKAGE = SignaturesTest.class.getPackageName() + ".";

  @Test
  void theClassesASignatureNames_areLoadedByTheLoaderOfTheClassThatNamesThem() throws Exception {
    try (IsolatingLoader loader = new IsolatingLoader()) {
      Class<?> names = loader.loadClass(PACKAGE + "NamesOne");
      assertThat(loader.hasLoaded("OnlyInASignature")).isFalse();
      assertThat(loader.hasLoaded("OnlyInAParameter")).isFalse();

      Signatures.resolve(names);

      assertThat(loader.hasLoaded("OnlyInASignature")).isTrue();
      assertThat(loader.hasLoaded("OnlyInAParameter")).isTrue();
    }
  }

  @Test
  void aClassThatCannotBeFound_leavesTheRestResolved_andThrowsNothing() throws Exception {
    try (IsolatingLoader loader = new IsolatingLoader()) {
      Class<?> missing = loader.loadClass(PACKAGE + "NamesAMissingOne");
      Class<?> names = loader.loadClass(PACKAGE + "NamesOne");
      assertThatThrownBy(missing::getDeclaredMethods).isInstanceOf(NoClassDefFoundError.class);

      Signatures.resolve(missing, names);

      assertThat(loader.hasLoaded("OnlyInASignature")).isTrue();
    }
  }

  /**
   * Loads this package's fixtures itself (from the test classes, above the platform loader) and
   * refuses {@code Missing}.
   */
  private static final class IsolatingLoader extends URLClassLoader {
    IsolatingLoader() {
      super(
          new URL[] {SignaturesTest.class.getProtectionDomain().getCodeSource().getLocation()},
          ClassLoader.getPlatformClassLoader());
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      if (name.equals(PACKAGE + "Missing")) {
        throw new ClassNotFoundException(name);
      }
      return super.findClass(name);
    }

    boolean hasLoaded(String simpleName) {
      return findLoadedClass(PACKAGE + simpleName) != null;
    }
  }
}
