package io.millrace.cli;

import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code millrace} command. */
@Command(
    name = "millrace",
    mixinStandardHelpOptions = true,
    version = "millrace 0.1.0-SNAPSHOT",
    description = "RSocket 1.0 for the JVM: an echo server and a client for any interaction.",
    subcommands = {EchoServerCommand.class, CallCommand.class})
public final class Main implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns its exit code (for tests). */
  public static int run(String... args) {
    PrintWriter out =
        new PrintWriter(
            new BufferedWriter(
                new OutputStreamWriter(
                    new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8),
                1 << 16));
    try {
      return new CommandLine(new Main()).setOut(out).execute(args);
    } finally {
      out.flush();
    }
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
