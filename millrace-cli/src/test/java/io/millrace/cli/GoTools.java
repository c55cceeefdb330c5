package io.millrace.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC tools people use, built from their pinned sources with {@code go install} (Go on the
 * PATH, the Go module proxy reachable) into {@code target/go-tools}, once per build: grpcurl and
 * ghz, which are gRPC clients nobody here wrote.
 */
final class GoTools {
  static final String GRPCURL = "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4";

  /** Pinned: {@code @latest} resolves to a 2021 release. */
  static final String GHZ = "github.com/bojand/ghz/cmd/ghz@v0.120.0";

  private static final Path BIN = Path.of("target", "go-tools").toAbsolutePath();

  private GoTools() {}

  /** The path of the tool {@code module} builds (installing it first if needed). */
  static synchronized Path install(String module) throws IOException, InterruptedException {
    String name = module.substring(module.lastIndexOf('/') + 1, module.indexOf('@'));
    Path tool = BIN.resolve(name);
    if (Files.isExecutable(tool)) {
      return tool;
    }
    Files.createDirectories(BIN);
    ProcessBuilder go = new ProcessBuilder("go", "install", module).redirectErrorStream(true);
    go.environment().put("GOBIN", BIN.toString());
    Process p = go.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("go install " + module + " failed:\n" + output);
    }
    return tool;
  }

  /** What a finished tool run printed, and how it exited. */
  record Run(int exitCode, String stdout, String stderr) {}

  /** Runs {@code tool} with {@code args} (stdin: {@code input}, or none), for at most a minute. */
  static Run run(Path tool, String input, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(tool.toString());
    command.addAll(List.of(args));
    Path out = Files.createTempFile("tool", ".out");
    Path err = Files.createTempFile("tool", ".err");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      Process p = pb.start();
      try (var stdin = p.getOutputStream()) {
        if (input != null) {
          stdin.write(input.getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!p.waitFor(1, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new AssertionError(tool.getFileName() + " did not finish: " + command);
      }
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
