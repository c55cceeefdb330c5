package io.millrace.bench.scenario;

import java.util.ArrayList;
import java.util.List;

/**
 * A server's once-a-second {@code TICK <millis> <messages> <allocated> <cpu ns> [<gc ms> [<jit
 * ms>]]} lines, read for a client's measured window.
 */
final class Ticks {
  static final int CPU_NANOS = 4;
  static final int GC_MILLIS = 5;

  private Ticks() {}

  /** The server's CPU share of the window from {@code start} to {@code end} (wall-clock millis). */
  static double cpuShare(List<String> serverLines, long start, long end) {
    long[] d = delta(serverLines, start, end, CPU_NANOS);
    return d == null ? 0 : d[0] / (d[1] * 1e6);
  }

  /** The server's garbage-collection milliseconds in the window, scaled to the window's length. */
  static long gcMillis(List<String> serverLines, long start, long end) {
    long[] d = delta(serverLines, start, end, GC_MILLIS);
    return d == null ? 0 : Math.round(d[0] * (double) (end - start) / d[1]);
  }

  /**
   * How much {@code field} grew, and over how many milliseconds: between the first and last tick
   * inside the window, or, for a window too short to hold two, between the ticks just around it.
   * Null without such ticks.
   */
  static long[] delta(List<String> serverLines, long start, long end, int field) {
    List<long[]> ticks = new ArrayList<>();
    for (String line : serverLines) {
      String[] cells = line.split(" ");
      if (cells[0].equals("TICK") && cells.length > field) {
        ticks.add(new long[] {Long.parseLong(cells[1]), Long.parseLong(cells[field])});
      }
    }
    long[] first = null;
    long[] last = null;
    for (long[] t : ticks) {
      if (t[0] >= start && t[0] <= end) {
        first = first == null ? t : first;
        last = t;
      }
    }
    if (first == null || last == first) {
      first = null;
      last = null;
      for (long[] t : ticks) {
        if (t[0] <= start) {
          first = t;
        }
        if (t[0] >= end && last == null) {
          last = t;
        }
      }
    }
    return first == null || last == null || last[0] <= first[0]
        ? null
        : new long[] {last[1] - first[1], last[0] - first[0]};
  }
}
