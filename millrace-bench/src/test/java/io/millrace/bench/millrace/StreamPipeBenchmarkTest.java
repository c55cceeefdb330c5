package io.millrace.bench.millrace;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The in-memory pipe carries each system's endless stream, as the benchmark drives it. */
class StreamPipeBenchmarkTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "millrace",
        "millrace-reactor",
        "millrace-rxjava",
        "millrace-mutiny",
        "millrace-rpc",
        "millrace-rpc-rxjava",
        "millrace-rpc-mutiny"
      })
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
