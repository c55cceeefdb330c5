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
