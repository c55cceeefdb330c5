package io.millrace.bench;

import picocli.CommandLine;

/**
 * Entry point of the benchmark jar: {@code bench} (the default) orchestrates; {@code serve} and
 * {@code drive} are the server and client processes it starts; {@code jmh} runs the JMH
 * micro-benchmarks with JMH's own options.
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("jmh")) {
      // JMH micro-benchmarks: millrace bench jmh [JMH options], e.g. "jmh Engine -prof gc".
      org.openjdk.jmh.Main.main(java.util.Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    CommandLine bench = new CommandLine(new RunCommand());
    bench.addSubcommand("serve", new ServeCommand());
    bench.addSubcommand("drive", new DriveCommand());
    bench.addSubcommand("idle-connections", new IdleCommand());
    bench.addSubcommand("idle-serve", new IdleServeCommand());
    bench.addSubcommand("idle-drive", new IdleDriveCommand());
    bench.addSubcommand("resume-latency", new ResumeLatencyCommand());
    bench.addSubcommand("crud", new io.millrace.bench.scenario.CrudCommand());
    bench.addSubcommand("small-heap", new io.millrace.bench.scenario.SmallHeapCommand());
    bench.addSubcommand("latency-load", new io.millrace.bench.scenario.LatencyLoadCommand());
    bench.addSubcommand(
        "latency-load-drive", new io.millrace.bench.scenario.LatencyLoadDriveCommand());
    bench.addSubcommand("scenario-serve", new io.millrace.bench.scenario.ScenarioServeCommand());
    bench.addSubcommand("crud-drive", new io.millrace.bench.scenario.CrudDriveCommand());
    bench.addSubcommand("small-heap-drive", new io.millrace.bench.scenario.SmallHeapDriveCommand());
    System.exit(bench.execute(args));
  }
}
