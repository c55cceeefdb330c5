package io.millrace.cli;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Resumption;
import io.millrace.transport.netty.ClientTls;
import io.millrace.transport.netty.IoKind;
import io.millrace.transport.netty.ServerTls;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/** Options shared by the subcommands. */
final class TransportOptions {
  @Option(
      names = "--host",
      defaultValue = "127.0.0.1",
      description = "Host, for tcp:// (default: ${DEFAULT-VALUE}); --listen or --url say more.")
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

  @Option(
      names = "--tls-cert",
      paramLabel = "PEM",
      description =
          "Certificate chain (PEM): the server's for tls:// and wss:// listeners; a client's for"
              + " servers that ask for one.")
  Path tlsCert;

  @Option(
      names = "--tls-key",
      paramLabel = "PEM",
      description = "Private key of --tls-cert (PKCS#8 PEM).")
  Path tlsKey;

  @Option(
      names = "--tls-ca",
      paramLabel = "PEM",
      description =
          "CA certificates (PEM): a client trusts servers they issued (default: the JDK's trust"
              + " store); a server requires client certificates they issued (mutual TLS).")
  Path tlsCa;

  @Option(
      names = "--tls-insecure",
      description = "Client: trust any server certificate and check no host name (tests only).")
  boolean tlsInsecure;

  @Option(
      names = "--io",
      paramLabel = "KIND",
      description =
          "Socket I/O: epoll, io_uring or nio (default: epoll where available, else nio).")
  String io;

  /**
   * Refuses {@code options} (--host, --port) given beside {@code uriOption} (--url, --listen),
   * which names the address itself: one of the two would be ignored without a word.
   */
  /** Refuses --tls-insecure beside --tls-ca: one of them would be ignored without a word. */
  void refuseContradictoryTls(CommandSpec spec) {
    if (tlsInsecure && tlsCa != null) {
      throw new ParameterException(
          spec.commandLine(),
          "--tls-insecure trusts any certificate and --tls-ca only those a CA issued: give one");
    }
  }

  static void refuseBeside(CommandSpec spec, String uriOption, String... options) {
    ParseResult parsed = spec.commandLine().getParseResult();
    for (String hostPort : options) {
      if (parsed.hasMatchedOption(hostPort)) {
        throw new ParameterException(
            spec.commandLine(),
            hostPort + " is the shorthand for a tcp:// address; " + uriOption + " names it whole");
      }
    }
  }

  /** The I/O kind asked for, or the preferred one. */
  IoKind ioKind() {
    return io == null ? IoKind.preferred() : IoKind.parse(io);
  }

  /** The server's TLS from --tls-cert, --tls-key and --tls-ca; null without a certificate. */
  ServerTls serverTls() throws IOException {
    if (tlsCert == null && tlsKey == null) {
      return null;
    }
    if (tlsCert == null || tlsKey == null) {
      throw new IllegalArgumentException("--tls-cert and --tls-key go together");
    }
    ServerTls.Builder tls = ServerTls.builder(tlsCert, tlsKey);
    if (tlsCa != null) {
      tls.requireClientCertificates(tlsCa);
    }
    return tls.build();
  }

  /** The client's TLS from --tls-ca, --tls-cert, --tls-key and --tls-insecure. */
  ClientTls clientTls() throws IOException {

    ClientTls.Builder tls = ClientTls.builder();
    if (tlsInsecure) {
      tls.insecure();
    } else if (tlsCa != null) {
      tls.trust(tlsCa);
    }
    if (tlsCert != null || tlsKey != null) {
      if (tlsCert == null || tlsKey == null) {
        throw new IllegalArgumentException("--tls-cert and --tls-key go together");
      }
      tls.keyPair(tlsCert, tlsKey);
    }
    return tls.build();
  }

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
