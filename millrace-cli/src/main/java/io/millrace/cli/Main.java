package io.millrace.cli;

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
    return new CommandLine(new Main()).execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }
}
