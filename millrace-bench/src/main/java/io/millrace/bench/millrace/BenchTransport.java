package io.millrace.bench.millrace;

import io.millrace.transport.netty.ClientTls;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.ServerTls;
import io.millrace.transport.netty.TransportUri;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The transport a benchmark process runs Millrace over ({@code --transport} of the serve and drive
 * commands): tcp, tls, ws, wss or unix, all on loopback. TLS uses a fixed certificate for localhost
 * (resources {@code io/millrace/bench/tls}, the test suite's), which the client trusts without
 * checking: the benchmark measures the encrypted traffic, not the trust decision.
 */
public final class BenchTransport {
  /** The transports the harness knows. */
  public static final List<String> NAMES = List.of("tcp", "tls", "ws", "wss", "unix");

  private static volatile String current = "tcp";

  private BenchTransport() {}

  /** Sets this process's transport (before any server or client is made). */
  public static void use(String transport) {
    if (!NAMES.contains(transport)) {
      throw new IllegalArgumentException(
          "unknown transport '" + transport + "' (expected one of " + NAMES + ")");
    }
    current = transport;
  }

  public static String current() {
    return current;
  }

  /** Where the server listens and the client connects, for the harness's {@code port}. */
  static TransportUri uri(int port) {
    switch (current) {
      case "unix":
        return TransportUri.parse(
            "unix://"
                + Path.of(
                    System.getProperty("java.io.tmpdir"), "millrace-bench-" + port + ".sock"));
      case "ws":
      case "wss":
        return TransportUri.parse(current + "://127.0.0.1:" + port + "/rsocket");
      default:
        return TransportUri.parse(current + "://127.0.0.1:" + port);
    }
  }

  /** {@code builder} listening on this transport. */
  static MillraceServer.Builder listen(MillraceServer.Builder builder, int port) {
    builder.listen(uri(port));
    if (uri(port).scheme().secure()) {
      try {
        builder.tls(ServerTls.builder(resource("server.pem"), resource("server.key")).build());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return builder;
  }

  /** {@code builder} able to connect over this transport. */
  static MillraceClient.Builder client(MillraceClient.Builder builder) {
    if (uri(0).scheme().secure()) {
      try {
        builder.tls(ClientTls.builder().insecure().build());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return builder;
  }

  private static Path resource(String name) throws IOException {
    Path file = Files.createTempFile("millrace-bench-", "-" + name);
    file.toFile().deleteOnExit();
    try (InputStream in =
        BenchTransport.class.getResourceAsStream("/io/millrace/bench/tls/" + name)) {
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
    }
    return file;
  }
}
