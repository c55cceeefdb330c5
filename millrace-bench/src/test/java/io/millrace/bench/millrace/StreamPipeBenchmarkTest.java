package io.millrace.bench.millrace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/** The in-memory pipe carries each system's endless stream, as the benchmark drives it. */
class StreamPipeBenchmarkTest {

  /** The systems the benchmark measures by default (its {@code system} parameter's values). */
  static Stream<String> systems() throws NoSuchFieldException {
    return Stream.of(
        StreamPipeBenchmark.class.getDeclaredField("system").getAnnotation(Param.class).value());
  }

  @ParameterizedTest
  @MethodSource("systems")
  void everyExchangeDeliversPayloads_andTheEnginesStayOpen(String system) {
    StreamPipeBenchmark b = new StreamPipeBenchmark();
    b.system = system;
    b.size = 8;
    b.setUp(); // releases what it made when it fails
    StreamPipeBenchmark.Items items = new StreamPipeBenchmark.Items();
    try {
      for (int i = 0; i < 50; i++) {
        long before = items.items;
        b.pump(items);
        // The consumer grants credit as it reads, so every exchange carries payloads: a stall
        // (credit lost, a producer never given its next turn) shows here as an exchange of none.
        assertThat(items.items).as(system + ", exchange " + i).isGreaterThan(before);
      }
    } finally {
      b.tearDown(); // throws when an engine closed
    }
    assertThat(items.items).isGreaterThanOrEqualTo(50 * MillraceSystem.BATCH);
  }
}
