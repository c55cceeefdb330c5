package io.millrace.cli;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Resumption;
import java.time.Duration;
import picocli.CommandLine.Option;

/** Options shared by the subcommands. */
final class TransportOptions {
  @Option(
      names = "--host",
      defaultValue = "127.0.0.1",
      description = "Host (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--port",
      defaultValue = "7878",
      description = "Port (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--fragment-size",
      defaultValue = "0",
      description = "Fragment outbound frames longer than this many bytes (0: off).")
  int fragmentSize;

  @Option(
      names = "--max-frame-length",
      defaultValue = "1048576",
      description = "Longest inbound frame accepted (default: ${DEFAULT-VALUE}).")
  int maxFrameLength;

  @Option(
      names = "--resume",
      description =
          "Session resumption (RSocket RESUME): a server keeps sessions for clients that ask;"
              + " a client asks, and when the connection breaks reconnects to the same address"
              + " and resumes where it stopped.")
  boolean resume;

  @Option(
      names = "--resume-session-ttl",
      defaultValue = "120",
      description =
          "With --resume: seconds a session lives without a connection (server), or keeps"
              + " reconnecting (client) (default: ${DEFAULT-VALUE}).")
  long resumeSessionTtlSeconds;

  ConnectionConfig.Builder config() {
    ConnectionConfig.Builder b =
        ConnectionConfig.builder().fragmentSize(fragmentSize).maxFrameLength(maxFrameLength);
    if (resume) {
      b.resumption(
          Resumption.builder().sessionTimeout(Duration.ofSeconds(resumeSessionTtlSeconds)).build());
    }
    return b;
  }
}
