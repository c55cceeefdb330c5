package io.millrace.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Medians and ranges of a few values: the rounds of one measurement, or ratios within rounds. */
final class Stats {
  private Stats() {}

  /** The median of {@code values} (the mean of the middle two for an even count); NaN if empty. */
  static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** The median, least and greatest of {@code values} (not empty), and how many there were. */
  static Range range(List<Double> values) {
    return new Range(
        median(values), Collections.min(values), Collections.max(values), values.size());
  }

  /** A median with the range it came from. */
  record Range(double median, double min, double max, int count) {
    /**
     * The median in {@code format} after multiplying by {@code scale}, followed by the range in
     * parentheses when it came from more than one value: {@code 2.0 (1.8..2.2)}.
     */
    String format(String format, double scale) {
      String m = String.format(Locale.ROOT, format, median * scale);
      if (count == 1) {
        return m;
      }
      return m
          + " ("
          + String.format(Locale.ROOT, format, min * scale)
          + ".."
          + String.format(Locale.ROOT, format, max * scale)
          + ")";
    }
  }
}
