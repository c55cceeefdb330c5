package io.millrace.cli;

import io.millrace.core.ConnectionConfig;
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

  ConnectionConfig.Builder config() {
    return ConnectionConfig.builder().fragmentSize(fragmentSize).maxFrameLength(maxFrameLength);
  }
}
