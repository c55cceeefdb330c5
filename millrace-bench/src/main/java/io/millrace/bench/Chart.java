package io.millrace.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * A grouped bar chart of throughput: one group per interaction and payload size, one bar per system
 * (median, with a line from min to max). Drawn with Java2D, no dependency.
 */
public final class Chart {
  private static final Color[] COLORS = {
    new Color(0x1f77b4),
    new Color(0xff7f0e),
    new Color(0x2ca02c),
    new Color(0xd62728),
    new Color(0x9467bd),
    new Color(0x8c564b),
    new Color(0xe377c2),
    new Color(0x7f7f7f),
    new Color(0xbcbd22)
  };

  private Chart() {}

  static void write(List<RunResult> results, List<String> systems, String title, File file)
      throws IOException {
    Map<String, Map<String, double[]>> groups = new LinkedHashMap<>();
    for (RunResult r : results) {
      if (r.ok()) {
        groups
            .computeIfAbsent(
                r.interaction.cliName + "\n" + r.size + " B", k -> new LinkedHashMap<>())
            .put(r.system, new double[] {r.median / 1e6, r.min / 1e6, r.max / 1e6});
      }
    }
    bars(groups, systems, title, "M/s", "median of per-second counts; line: min to max", file);
  }

  /**
   * A grouped bar chart: per group (its label's lines split by a newline), one bar per system of
   * {@code {value, low, high}} with a line from low to high; the axis in {@code unit}.
   */
  public static void bars(
      Map<String, Map<String, double[]>> groups,
      List<String> systems,
      String title,
      String unit,
      String note,
      File file)
      throws IOException {
    double top = 1e-9;
    for (Map<String, double[]> group : groups.values()) {
      for (double[] v : group.values()) {
        top = Math.max(top, Math.max(v[0], v[2]));
      }
    }
    int barWidth = 22;
    int groupWidth = systems.size() * barWidth + 30;
    int left = 80;
    int width = Math.max(600, left + 20 + groups.size() * groupWidth);
    int height = 480;
    int plotTop = 60;
    int plotBottom = height - 80;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = start(image, title, left);
    double scale = niceCeiling(top);
    for (int i = 0; i <= 5; i++) {
      double value = scale * i / 5;
      int y = plotBottom - (int) ((plotBottom - plotTop) * i / 5.0);
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, y, width - 20, y);
      g.setColor(Color.BLACK);
      g.drawString(String.format(Locale.ROOT, "%.2f %s", value, unit), 5, y + 4);
    }
    int x = left + 15;
    for (Map.Entry<String, Map<String, double[]>> group : groups.entrySet()) {
      for (int s = 0; s < systems.size(); s++) {
        double[] v = group.getValue().get(systems.get(s));
        if (v == null) {
          continue;
        }
        int bx = x + s * barWidth;
        int h = (int) ((plotBottom - plotTop) * v[0] / scale);
        g.setColor(COLORS[s % COLORS.length]);
        g.fillRect(bx, plotBottom - h, barWidth - 4, h);
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(1.5f));
        int yMin = plotBottom - (int) ((plotBottom - plotTop) * v[1] / scale);
        int yMax = plotBottom - (int) ((plotBottom - plotTop) * v[2] / scale);
        int cx = bx + (barWidth - 4) / 2;
        g.drawLine(cx, yMin, cx, yMax);
      }
      String[] label = group.getKey().split("\n");
      g.setColor(Color.BLACK);
      for (int i = 0; i < label.length; i++) {
        g.drawString(label[i], x, plotBottom + 16 + 14 * i);
      }
      x += groupWidth;
    }
    legend(g, systems, left, height);
    g.drawString(note, left, 45);
    g.dispose();
    ImageIO.write(image, "png", file);
  }

  /**
   * A line chart: one line per series of {@code {x, y}} points, y on a logarithmic axis (latency
   * spans orders of magnitude), x linear from 0.
   */
  public static void lines(
      Map<String, List<double[]>> series,
      String title,
      String xUnit,
      String yUnit,
      String note,
      File file)
      throws IOException {
    double maxX = 1e-9;
    double minY = Double.MAX_VALUE;
    double maxY = 1e-9;
    for (List<double[]> points : series.values()) {
      for (double[] p : points) {
        maxX = Math.max(maxX, p[0]);
        if (p[1] > 0) {
          minY = Math.min(minY, p[1]);
          maxY = Math.max(maxY, p[1]);
        }
      }
    }
    if (minY == Double.MAX_VALUE) {
      minY = 1;
    }
    double lowDecade = Math.pow(10, Math.floor(Math.log10(minY)));
    double highDecade = Math.pow(10, Math.ceil(Math.log10(Math.max(maxY, lowDecade * 10))));
    double xScale = niceCeiling(maxX);
    int left = 90;
    int width = 900;
    int height = 520;
    int plotTop = 60;
    int plotBottom = height - 90;
    int plotRight = width - 30;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = start(image, title, left);
    double decades = Math.log10(highDecade / lowDecade);
    for (double d = lowDecade; d <= highDecade * 1.0001; d *= 10) {
      int y = plotBottom - (int) ((plotBottom - plotTop) * Math.log10(d / lowDecade) / decades);
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, y, plotRight, y);
      g.setColor(Color.BLACK);
      g.drawString(String.format(Locale.ROOT, "%s %s", compact(d), yUnit), 5, y + 4);
    }
    for (int i = 0; i <= 5; i++) {
      double value = xScale * i / 5;
      int x = left + (int) ((plotRight - left) * i / 5.0);
      g.drawString(String.format(Locale.ROOT, "%s", compact(value)), x - 10, plotBottom + 16);
    }
    g.drawString(xUnit, plotRight - 120, plotBottom + 32);
    List<String> names = new java.util.ArrayList<>(series.keySet());
    for (int s = 0; s < names.size(); s++) {
      g.setColor(COLORS[s % COLORS.length]);
      g.setStroke(new BasicStroke(2f));
      int px = -1;
      int py = -1;
      for (double[] p : series.get(names.get(s))) {
        if (p[1] <= 0) {
          continue;
        }
        int x = left + (int) ((plotRight - left) * p[0] / xScale);
        int y =
            plotBottom - (int) ((plotBottom - plotTop) * Math.log10(p[1] / lowDecade) / decades);
        g.fillOval(x - 3, y - 3, 6, 6);
        if (px >= 0) {
          g.drawLine(px, py, x, y);
        }
        px = x;
        py = y;
      }
    }
    g.setStroke(new BasicStroke(1f));
    legend(g, names, left, height);
    g.setColor(Color.BLACK);
    g.drawString(note, left, height - 45);
    g.dispose();
    ImageIO.write(image, "png", file);
  }

  private static Graphics2D start(BufferedImage image, String title, int left) {
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, image.getWidth(), image.getHeight());
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    g.drawString(title, left, 25);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    return g;
  }

  private static void legend(Graphics2D g, List<String> names, int left, int height) {
    int lx = left;
    int ly = height - 30;
    for (int s = 0; s < names.size(); s++) {
      g.setColor(COLORS[s % COLORS.length]);
      g.fillRect(lx, ly, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(names.get(s), lx + 20, ly + 11);
      lx += 20 + g.getFontMetrics().stringWidth(names.get(s)) + 20;
    }
  }

  /** 1500 as "1.5k", 2000000 as "2M". */
  private static String compact(double v) {
    if (v >= 1e6) {
      return String.format(Locale.ROOT, "%.3gM", v / 1e6);
    }
    if (v >= 1e3) {
      return String.format(Locale.ROOT, "%.3gk", v / 1e3);
    }
    return String.format(Locale.ROOT, "%.3g", v);
  }

  private static double niceCeiling(double value) {
    double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * magnitude >= value) {
        return step * magnitude;
      }
    }
    return 10 * magnitude;
  }
}
