package io.millrace.bench.scenario;

import io.millrace.bench.Systems;
import io.millrace.bench.Ticker;
import java.io.InputStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server process of a scenario run: serves the scenario's service on one system, prints {@code
 * READY}, then a {@code TICK} line a second (see {@link Ticks}), and when its standard input closes
 * a last tick and its {@code GC} line, and exits.
 */
@Command(name = "scenario-serve", hidden = true, description = "Server process of a scenario run.")
public final class ScenarioServeCommand implements Callable<Integer> {
  @Option(names = "--scenario", required = true, description = "crud or unary")
  String scenario;

  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--delay-us", defaultValue = "0", description = "unary: the handler's delay.")
  long delayMicros;

  @Option(names = "--size", defaultValue = "128", description = "unary: reply payload bytes.")
  int size;

  @Override
  public Integer call() throws Exception {
    AutoCloseable server =
        switch (scenario) {
          case "crud" -> CrudSystems.serve(system, port);
          case "unary" -> UnarySystems.serve(system, port, delayMicros * 1_000, size);
          default -> throw new IllegalArgumentException("unknown scenario " + scenario);
        };
    try {
      System.out.println("READY");
      System.out.flush();
      Thread ticker = Ticker.start(ScenarioServeCommand::tickLine);
      InputStream in = System.in;
      while (in.read() >= 0) {
        // until the harness closes our input
      }
      ticker.interrupt();
      System.out.println(tickLine()); // a last tick, for a window that ended just now
      System.out.println(Latency.gcLine());
      System.out.flush();
    } finally {
      server.close();
    }
    return 0;
  }

  /** {@code TICK <millis> 0 <allocated> <cpu ns> <gc ms> <jit ms>}: see {@link Ticks}. */
  private static String tickLine() {
    return Systems.tick(System.currentTimeMillis(), 0);
  }
}
