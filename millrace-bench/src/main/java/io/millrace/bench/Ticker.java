package io.millrace.bench;

import java.util.function.Supplier;

/** A server process's once-a-second line on standard output, on a daemon thread. */
public final class Ticker {
  private Ticker() {}

  /** Prints {@code line} at each whole second until the returned thread is interrupted. */
  public static Thread start(Supplier<String> line) {
    Thread ticker =
        new Thread(
            () -> {
              try {
                while (true) {
                  Thread.sleep(1000 - System.currentTimeMillis() % 1000);
                  System.out.println(line.get());
                  System.out.flush();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "bench-ticker");
    ticker.setDaemon(true);
    ticker.start();
    return ticker;
  }
}
