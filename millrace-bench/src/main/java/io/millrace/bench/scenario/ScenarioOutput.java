package io.millrace.bench.scenario;

import io.millrace.bench.ProcessRunner;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/** What every scenario command writes and where its processes log: a picocli mixin. */
final class ScenarioOutput {
  @Option(names = "--csv", description = "Write the results as CSV here.")
  File csv;

  @Option(names = "--png", description = "Write the results' chart here.")
  File png;

  @Option(names = "--logs", defaultValue = "target/bench-logs", description = "Process logs.")
  Path logs;

  /** Writes one file. */
  interface Writer {
    void write(File file) throws Exception;
  }

  /** Runs server and client processes logging into {@link #logs}, with no extra JVM options. */
  ProcessRunner runner() throws Exception {
    return runner(List.of(), List.of());
  }

  /** Runs server and client processes logging into {@link #logs} with these extra JVM options. */
  ProcessRunner runner(List<String> serverOptions, List<String> clientOptions) throws Exception {
    Files.createDirectories(logs);
    return new ProcessRunner(logs, serverOptions, clientOptions);
  }

  /** Prints the report, then writes the CSV and the chart where they were asked for. */
  void finish(String report, Writer csvWriter, Writer pngWriter) throws Exception {
    System.out.println();
    System.out.print(report);
    if (csv != null) {
      csvWriter.write(csv);
      System.out.println("CSV: " + csv);
    }
    if (png != null) {
      pngWriter.write(png);
      System.out.println("Chart: " + png);
    }
  }
}
