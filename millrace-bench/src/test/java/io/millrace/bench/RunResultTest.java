package io.millrace.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One run's figures from made-up TICK lines, whose true per-message figures are known. */
class RunResultTest {

  /**
   * Ticks once a second from {@code firstMillis}, of a run whose rate rises steadily (messages so
   * far: millis squared over ten) and whose messages cost {@code cpuPer} CPU nanoseconds each.
   */
  private static List<RunResult.Tick> ticks(long firstMillis, int count, long cpuPer) {
    List<RunResult.Tick> ticks = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long millis = firstMillis + 1000L * i;
      long messages = millis * millis / 10;
      ticks.add(new RunResult.Tick(millis, messages, 0, messages * cpuPer, 0, 0));
    }
    return ticks;
  }

  @Test
  void cpuPerMessage_sidesTickingAtDifferentInstants_eachSideGetsItsOwnInterval() {
    // The client ticks 400 ms after the server's whole seconds, as its measurement started then,
    // and the rate rises: the client's messages in the server's interval, read at the client's
    // nearest ticks, would be 400 ms of a faster rate off (87.5 ns instead of 90).
    List<RunResult.Tick> client = ticks(10_400, 8, 70);
    List<RunResult.Tick> server = ticks(10_000, 9, 90);
    RunResult r = new RunResult("millrace", Interaction.REQUEST_STREAM, 8, "1g");
    r.compute(client, server, 11_000, 17_500);
    assertThat(r.ok()).isTrue();
    assertThat(r.cpuClient).isCloseTo(70.0, within(0.01));
    assertThat(r.cpuServer).isCloseTo(90.0, within(0.2));
  }

  @Test
  void countAt_interpolatesBetweenTicks_andHoldsAtTheEnds() {
    List<RunResult.Tick> ticks =
        List.of(
            new RunResult.Tick(1000, 100, 0, 0, 0, 0), new RunResult.Tick(2000, 300, 0, 0, 0, 0));
    assertThat(RunResult.countAt(ticks, 1250)).isEqualTo(150.0);
    assertThat(RunResult.countAt(ticks, 2000)).isEqualTo(300.0);
    assertThat(RunResult.countAt(ticks, 500)).isEqualTo(100.0);
    assertThat(RunResult.countAt(ticks, 9000)).isEqualTo(300.0);
  }

  @Test
  void cpuPerMessage_linesWithoutCpu_unknown() {
    List<RunResult.Tick> client = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      client.add(RunResult.Tick.parse("TICK " + (1000L * i) + " " + (1000L * i) + " 0"));
    }
    RunResult r = new RunResult("millrace", Interaction.REQUEST_STREAM, 8, "1g");
    r.compute(client, client, 0, 5000);
    assertThat(r.ok()).isTrue();
    assertThat(r.cpuClient).isNaN();
  }

  @Test
  void jitShare_fromEachSidesCompileMillis_unknownWhereTheLinesHaveNone() {
    List<RunResult.Tick> client = new ArrayList<>();
    List<RunResult.Tick> server = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      long millis = 1000L * i;
      // the client's lines stop at the GC field; the server compiled 250 ms in each second
      client.add(RunResult.Tick.parse("TICK " + millis + " " + millis + " 0 " + millis + " 0"));
      server.add(
          RunResult.Tick.parse(
              "TICK " + millis + " " + millis + " 0 " + millis + " 0 " + (100 + 250 * i)));
    }
    RunResult r = new RunResult("millrace", Interaction.REQUEST_STREAM, 8, "1g");
    r.compute(client, server, 1000, 5000);
    assertThat(r.ok()).isTrue();
    assertThat(r.jitServer).isCloseTo(0.25, within(1e-9));
    assertThat(r.jitClient).isNaN();
    assertThat(r.jitBusy()).isTrue(); // over a tenth of the window
    r.jitServer = 0.05;
    assertThat(r.jitBusy()).isFalse();
  }
}
