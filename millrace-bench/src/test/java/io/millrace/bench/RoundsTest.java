package io.millrace.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A run of several rounds is summarised per measurement and its ratios are taken within each round
 * (no processes here: the runs are made up, so the expected figures are known).
 */
class RoundsTest {

  private static RunResult run(String system, String heap, int round, double median, double alloc) {
    RunResult r = new RunResult(system, Interaction.REQUEST_STREAM, 8, heap);
    r.round = round;
    r.median = median;
    r.min = median * 0.9;
    r.max = median * 1.1;
    r.allocClient = alloc;
    r.allocServer = alloc;
    return r;
  }

  private static RunCommand command(int rounds) {
    RunCommand c = new RunCommand();
    c.level = "rpc";
    c.rounds = rounds;
    c.largeHeap = "1g";
    c.smallHeap = "20m";
    return c;
  }

  @Test
  void summary_isTheMedianOfTheRoundsMedians_withTheirRange() {
    RunCommand c = command(3);
    c.results.add(run("millrace-rpc", "1g", 1, 9.0, 80));
    c.results.add(run("millrace-rpc", "1g", 2, 6.0, 88));
    c.results.add(run("millrace-rpc", "1g", 3, 7.0, 80));
    c.summarizeRuns();

    assertThat(c.report()).contains("millrace-rpc                     7 (6 - 9)").contains("80/80");
  }

  @Test
  void ratios_areTakenWithinEachRound_thenTheirMedian() {
    // The machine's speed drifts: round 2 runs everything at half speed. Ratios within a round
    // stay 2x grpc-java and 50 % of the core; ratios of the medians would say otherwise.
    RunCommand c = command(3);
    double[] speed = {1.0, 0.5, 0.9};
    for (int round = 1; round <= 3; round++) {
      double k = speed[round - 1];
      c.results.add(run("millrace", "1g", round, 20 * k, 0));
      c.results.add(run("millrace-rpc", "1g", round, (round == 3 ? 11 : 10) * k, 80));
      c.results.add(run("grpc-java-rpc", "1g", round, 5 * k, 500));
    }
    c.summarizeRuns();

    String report = c.report();
    assertThat(report).contains("x2.0 (2.0..2.2) 50 (50..55)% core");
  }

  /**
   * The two heaps of every measurement run back to back, the small one first in even rounds, also
   * where systems skip interactions (futures: no channel; grpc-java: no fire-and-forget from a
   * thread) and over several sizes, callers and transports.
   */
  @Test
  void plan_putsTheHeapsOfEachMeasurementNextToEachOther_smallFirstInEvenRounds() {
    RunCommand c = command(2);
    c.systems = java.util.List.of("millrace", "millrace-futures", "grpc-java");
    c.sizes = java.util.List.of(8, 512);
    c.callers = java.util.List.of("loop", "thread");
    c.transports = java.util.List.of("tcp", "tls");
    java.util.List<Object[]> plan =
        c.plan(
            java.util.List.of("1g", "20m"),
            java.util.List.of(
                Interaction.REQUEST_RESPONSE,
                Interaction.FIRE_AND_FORGET,
                Interaction.REQUEST_CHANNEL));
    // Per size and heap: millrace (rr and fnf) x 2 callers + channel = 5, futures 4 (no channel),
    // both over tcp and tls; grpc-java rr x 2 callers, fnf from the loop, channel = 4, tcp only.
    assertThat(plan).hasSize(2 * 2 * (5 * 2 + 4 * 2 + 4));
    for (int round = 1; round <= 2; round++) {
      java.util.List<Object[]> order = RunCommand.inRoundOrder(plan, round, 2);
      assertThat(order).hasSameSizeAs(plan);
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (int i = 0; i < order.size(); i += 2) {
        Object[] first = order.get(i);
        Object[] second = order.get(i + 1);
        assertThat(java.util.Arrays.copyOfRange(first, 1, first.length))
            .as("run %d and %d measure the same thing", i, i + 1)
            .containsExactly(java.util.Arrays.copyOfRange(second, 1, second.length));
        assertThat(first[0]).isEqualTo(round % 2 == 1 ? "1g" : "20m");
        assertThat(second[0]).isEqualTo(round % 2 == 1 ? "20m" : "1g");
        assertThat(seen.add(java.util.Arrays.toString(first))).isTrue();
        assertThat(seen.add(java.util.Arrays.toString(second))).isTrue();
      }
    }
    assertThat(RunCommand.inRoundOrder(plan, 2, 1))
        .as("one heap: nothing to alternate")
        .containsExactlyElementsOf(plan);
  }

  @Test
  void smallHeapChange_isTakenWithinEachRound() {
    RunCommand c = command(2);
    c.results.add(run("millrace-rpc", "1g", 1, 10, 80));
    c.results.add(run("millrace-rpc", "20m", 1, 9, 80));
    c.results.add(run("millrace-rpc", "1g", 2, 5, 80));
    c.results.add(run("millrace-rpc", "20m", 2, 4, 80));
    c.summarizeRuns();

    assertThat(c.report())
        .contains("Throughput change at -Xmx20m against -Xmx1g")
        .contains("millrace-rpc          -15.0 (-20.0..-10.0) %");
  }

  @Test
  void oneRound_reportsTheRunAsBefore_withoutRanges() {
    RunCommand c = command(1);
    c.results.add(run("millrace", "1g", 1, 20, 0));
    c.results.add(run("millrace-rpc", "1g", 1, 10, 80));
    c.results.add(run("grpc-java-rpc", "1g", 1, 5, 500));
    c.summarizeRuns();

    assertThat(c.report()).contains("x2.0 50% core").doesNotContain("..");
  }
}
