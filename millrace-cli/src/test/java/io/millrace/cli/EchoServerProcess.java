package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The echo server's process. Its output goes to a file: a pipe read while the process exits may
 * lose the last lines (the JDK swaps the pipe's stream at exit under a blocked reader).
 */
final class EchoServerProcess implements AutoCloseable {
  final Process process;
  final Path output;

  EchoServerProcess(String... extra) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Main.class.getName());
    command.add("echo-server");
    if (List.of(extra).stream()
        .noneMatch(
            a ->
                a.equals("--listen")
                    || a.startsWith(
                        "--listen="))) { // --listen names its own ports (--port is refused)
      command.add("--port");
      command.add("0");
    }
    command.addAll(List.of(extra));
    output = Files.createTempFile("echo-server", ".log");
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
  }

  String output() throws java.io.IOException {
    return Files.readString(output, StandardCharsets.UTF_8);
  }

  int port() throws Exception {
    Pattern listening = Pattern.compile("listening on tcp://127\\.0\\.0\\.1:(\\d+)");
    for (int i = 0; i < 1000; i++) {
      Matcher m = listening.matcher(output());
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
      Thread.sleep(10);
    }
    throw new AssertionError("the echo server did not report its port: " + output());
  }

  /** The URIs it reports listening on, once it reports {@code count} of them. */
  List<String> listeners(int count) throws Exception {
    Pattern listening = Pattern.compile("echo-server listening on (\\S+)");
    for (int i = 0; i < 1000; i++) {
      Matcher m = listening.matcher(output());
      List<String> uris = new ArrayList<>();
      while (m.find()) {
        uris.add(m.group(1));
      }
      if (uris.size() >= count) {
        return uris;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("the echo server did not report its listeners: " + output());
  }

  /** The gRPC port it reports (started with {@code --grpc-port}). */
  int grpcPort() throws Exception {
    Pattern listening = Pattern.compile("gRPC \\(h2c\\) on 127\\.0\\.0\\.1:(\\d+)");
    for (int i = 0; i < 1000; i++) {
      Matcher m = listening.matcher(output());
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
      Thread.sleep(10);
    }
    throw new AssertionError("the echo server did not report its gRPC port: " + output());
  }

  /** Waits for the exit (bounded) and returns everything it printed. */
  String awaitExit() throws Exception {
    assertThat(process.waitFor(15, TimeUnit.SECONDS)).as("the server exits").isTrue();
    return output();
  }

  @Override
  public void close() throws java.io.IOException {
    process.destroyForcibly();
    Files.deleteIfExists(output);
  }
}
