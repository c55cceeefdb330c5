package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class FailuresTest {
  @Test
  void theJvmsOwnFailures_areLetThrough() {
    assertThat(Failures.fatal(new OutOfMemoryError())).isTrue();
    assertThat(Failures.fatal(new InternalError())).isTrue();
    @SuppressWarnings("removal")
    ThreadDeath stopped = new ThreadDeath();
    assertThat(Failures.fatal(stopped)).isTrue();
  }

  @Test
  void whatApplicationCodeThrows_isItsFailure() {
    assertThat(Failures.fatal(new IllegalStateException())).isFalse();
    assertThat(Failures.fatal(new IOException("thrown undeclared"))).isFalse();
    assertThat(Failures.fatal(new StackOverflowError())).isFalse();
    assertThat(Failures.fatal(new AssertionError())).isFalse();
    assertThat(Failures.fatal(new NoClassDefFoundError("a.Missing"))).isFalse();
    assertThat(Failures.fatal(new Exception())).isFalse();
  }

  @Test
  void throwIfFatal_throwsTheJvmsOwn_andReturnsForTheRest() {
    OutOfMemoryError oom = new OutOfMemoryError();
    assertThatThrownBy(() -> Failures.throwIfFatal(oom)).isSameAs(oom);
    assertThatCode(() -> Failures.throwIfFatal(new IOException("the call's")))
        .doesNotThrowAnyException();
    assertThatCode(() -> Failures.throwIfFatal(new StackOverflowError()))
        .doesNotThrowAnyException();
  }
}
