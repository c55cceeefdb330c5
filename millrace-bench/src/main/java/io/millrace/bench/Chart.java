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
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * A grouped bar chart of throughput: one group per interaction and payload size, one bar per system
 * (median, with a line from min to max). Drawn with Java2D, no dependency.
 */
final class Chart {
  private static final Color[] COLORS = {
    new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728)
  };

  private Chart() {}

  static void write(List<RunResult> results, List<String> systems, String title, File file)
      throws IOException {
    Map<String, Map<String, RunResult>> groups = new LinkedHashMap<>();
    double top = 1;
    for (RunResult r : results) {
      if (!r.ok()) {
        continue;
      }
      groups
          .computeIfAbsent(r.interaction.cliName + "\n" + r.size + " B", k -> new LinkedHashMap<>())
          .put(r.system, r);
      top = Math.max(top, r.max);
    }
    int barWidth = 22;
    int groupWidth = systems.size() * barWidth + 30;
    int left = 80;
    int width = Math.max(600, left + 20 + groups.size() * groupWidth);
    int height = 480;
    int plotTop = 60;
    int plotBottom = height - 80;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    g.drawString(title, left, 25);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    double scale = niceCeiling(top);
    for (int i = 0; i <= 5; i++) {
      double value = scale * i / 5;
      int y = plotBottom - (int) ((plotBottom - plotTop) * i / 5.0);
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, y, width - 20, y);
      g.setColor(Color.BLACK);
      g.drawString(String.format("%.2f M/s", value / 1e6), 5, y + 4);
    }
    int x = left + 15;
    for (Map.Entry<String, Map<String, RunResult>> group : groups.entrySet()) {
      for (int s = 0; s < systems.size(); s++) {
        RunResult r = group.getValue().get(systems.get(s));
        if (r == null) {
          continue;
        }
        int bx = x + s * barWidth;
        int h = (int) ((plotBottom - plotTop) * r.median / scale);
        g.setColor(COLORS[s % COLORS.length]);
        g.fillRect(bx, plotBottom - h, barWidth - 4, h);
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(1.5f));
        int yMin = plotBottom - (int) ((plotBottom - plotTop) * r.min / scale);
        int yMax = plotBottom - (int) ((plotBottom - plotTop) * r.max / scale);
        int cx = bx + (barWidth - 4) / 2;
        g.drawLine(cx, yMin, cx, yMax);
      }
      String[] label = group.getKey().split("\n");
      g.setColor(Color.BLACK);
      g.drawString(label[0], x, plotBottom + 16);
      g.drawString(label[1], x, plotBottom + 30);
      x += groupWidth;
    }
    int lx = left;
    for (int s = 0; s < systems.size(); s++) {
      g.setColor(COLORS[s % COLORS.length]);
      g.fillRect(lx, height - 30, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(systems.get(s), lx + 20, height - 19);
      lx += 140;
    }
    g.drawString("median of per-second counts; line: min to max", width - 300, height - 19);
    g.dispose();
    ImageIO.write(image, "png", file);
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
