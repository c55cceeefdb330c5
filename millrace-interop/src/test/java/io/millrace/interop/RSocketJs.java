package io.millrace.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * rsocket-js peers for the interop tests: the scripts in {@code src/test/js} run on Node (20 or
 * later on the PATH) with the rsocket-js packages pinned in {@code package-lock.json}, installed
 * once per build with {@code npm ci} into {@code target/rsocket-js}.
 */
final class RSocketJs {
  private static final Path SOURCES = Path.of("src", "test", "js");
  private static final Path HOME = Path.of("target", "rsocket-js");
  private static boolean installed;

  private RSocketJs() {}

  /** Copies the scripts and installs the pinned packages (once). */
  static synchronized Path install() throws IOException, InterruptedException {
    if (installed) {
      return HOME;
    }
    Files.createDirectories(HOME);
    try (Stream<Path> files = Files.list(SOURCES)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.copy(file, HOME.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    Process npm =
        new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund")
            .directory(HOME.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!npm.waitFor(3, TimeUnit.MINUTES) || npm.exitValue() != 0) {
      throw new IllegalStateException("npm ci failed in " + HOME + ":\n" + output);
    }
    installed = true;
    return HOME;
  }

  /** A running Node script; its stdout lines are collected as they come. */
  static final class Script implements AutoCloseable {
    final Process process;
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    Script(String script, String... args) throws IOException, InterruptedException {
      Path home = install();
      List<String> command = new ArrayList<>();
      command.add("node");
      command.add(script);
      command.addAll(List.of(args));
      process =
          new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true).start();
      reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  lines.add("reader: " + e);
                }
              },
              "rsocket-js-output");
      reader.setDaemon(true);
      reader.start();
    }

    /** The last "progress N" (or "done N") printed, 0 before any. */
    int progress() {
      for (int i = lines.size() - 1; i >= 0; i--) {
        String line = lines.get(i);
        if (line.startsWith("progress ") || line.startsWith("done ")) {
          return Integer.parseInt(line.substring(line.indexOf(' ') + 1).trim());
        }
      }
      return 0;
    }

    /**
     * Waits for a server script's "listening PORT" line and returns the port; fails if the script
     * exits or prints none within 20 seconds.
     */
    int awaitListening() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (true) {
        for (String line : lines) {
          if (line.startsWith("listening ")) {
            return Integer.parseInt(line.substring("listening ".length()).trim());
          }
        }
        if (!process.isAlive() || System.nanoTime() - deadline > 0) {
          throw new AssertionError(
              "the script did not say it was listening:\n" + String.join("\n", lines));
        }
        Thread.sleep(10);
      }
    }

    /** Waits for the script to exit; returns its exit code, or -1 if it did not in time. */
    int await(long timeout, TimeUnit unit) throws InterruptedException {
      if (!process.waitFor(timeout, unit)) {
        return -1;
      }
      reader.join(TimeUnit.SECONDS.toMillis(5));
      return process.exitValue();
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
