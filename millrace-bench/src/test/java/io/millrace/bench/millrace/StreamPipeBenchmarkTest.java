package io.millrace.bench.millrace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
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
    pumps(system, "both", "request-stream");
  }

  /** A channel's echoes come back in every exchange. */
  @ParameterizedTest
  @ValueSource(strings = {"millrace", "millrace-reactor", "millrace-rpc"})
  void channelsEchoEveryExchange(String system) {
    pumps(system, "both", "request-channel");
  }

  /** Every exchange answers calls, and a new call follows each answer. */
  @ParameterizedTest
  @ValueSource(strings = {"millrace", "millrace-reactor", "millrace-rpc"})
  void requestResponsesKeepTheirWindow(String system) {
    pumps(system, "both", "request-response");
  }

  /**
   * A flavour's client against the core's responder, and the core's consumer against its server.
   */
  @ParameterizedTest
  @CsvSource({"millrace-reactor, client", "millrace-reactor, server"})
  void oneSideMayBeTheCores(String system, String flavourSide) {
    pumps(system, flavourSide, "request-stream");
  }

  @Test
  void anRpcSystemRunsBothSides() {
    StreamPipeBenchmark b = new StreamPipeBenchmark();
    b.system = "millrace-rpc";
    b.size = 8;
    b.flavourSide = "client";
    b.interaction = "request-stream";
    assertThatThrownBy(b::setUp).hasMessageContaining("flavourSide=both only");
  }

  private static void pumps(String system, String flavourSide, String interaction) {
    StreamPipeBenchmark b = new StreamPipeBenchmark();
    b.system = system;
    b.size = 8;
    b.flavourSide = flavourSide;
    b.interaction = interaction;
    boolean calls = interaction.equals("request-response");
    // A stream's exchange carries at least a credit batch; a call window's, every call answered
    // (and as many started again): after the first exchange, the whole window each time.
    int exchanges = calls ? 10 : 50;
    long leastPerExchange = calls ? StreamPipeBenchmark.WINDOW : MillraceSystem.BATCH;
    b.setUp(); // releases what it made when it fails
    StreamPipeBenchmark.Items items = new StreamPipeBenchmark.Items();
    try {
      for (int i = 0; i < exchanges; i++) {
        long before = items.items;
        b.pump(items);
        // The consumer grants credit as it reads, so every exchange carries payloads: a stall
        // (credit lost, a producer never given its next turn) shows here as an exchange of none.
        assertThat(items.items).as(system + ", exchange " + i).isGreaterThan(before);
      }
    } finally {
      b.tearDown(); // throws when an engine closed
    }
    assertThat(items.items).isGreaterThanOrEqualTo((exchanges - 1) * leastPerExchange);
  }
}
