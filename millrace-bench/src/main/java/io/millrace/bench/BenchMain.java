package io.millrace.bench;

import picocli.CommandLine;

/**
 * Entry point of the benchmark jar: {@code bench} (the default) orchestrates; {@code serve} and
 * {@code drive} are the server and client processes it starts; {@code jmh} runs the JMH
 * micro-benchmarks with JMH's own options.
 */
public final class BenchMain {
  /** The commands of the processes the harness starts, each measured on its own heap. */
  private static final java.util.Map<String, java.util.function.Supplier<Object>> PROCESSES =
      java.util.Map.of(
          "serve", ServeCommand::new,
          "drive", DriveCommand::new,
          "idle-serve", IdleServeCommand::new,
          "idle-drive", IdleDriveCommand::new,
          "latency-load-drive", io.millrace.bench.scenario.LatencyLoadDriveCommand::new,
          "scenario-serve", io.millrace.bench.scenario.ScenarioServeCommand::new,
          "crud-drive", io.millrace.bench.scenario.CrudDriveCommand::new,
          "small-heap-drive", io.millrace.bench.scenario.SmallHeapDriveCommand::new);

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("jmh")) {
      // JMH micro-benchmarks: millrace bench jmh [JMH options], e.g. "jmh Engine -prof gc".
      org.openjdk.jmh.Main.main(java.util.Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    java.util.function.Supplier<Object> measured = PROCESSES.get(args.length > 0 ? args[0] : "");
    if (measured != null) {
      // A process the harness starts builds its own command only: picocli's model of every other
      // command (their options' reflection, their fields' initial values) would stay on its heap,
      // which the small-heap pass measures.
      System.exit(
          new CommandLine(measured.get())
              .execute(java.util.Arrays.copyOfRange(args, 1, args.length)));
    }
    CommandLine bench = new CommandLine(new RunCommand());
    bench.addSubcommand("idle-connections", new IdleCommand());
    bench.addSubcommand("resume-latency", new ResumeLatencyCommand());
    bench.addSubcommand("crud", new io.millrace.bench.scenario.CrudCommand());
    bench.addSubcommand("small-heap", new io.millrace.bench.scenario.SmallHeapCommand());
    bench.addSubcommand("latency-load", new io.millrace.bench.scenario.LatencyLoadCommand());
    PROCESSES.forEach((name, make) -> bench.addSubcommand(name, make.get()));
    System.exit(bench.execute(args));
  }
}
