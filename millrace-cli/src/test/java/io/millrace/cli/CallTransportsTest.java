package io.millrace.cli;

import static io.millrace.testing.TestCertificates.path;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code ./millrace echo-server --listen URI...} and {@code ./millrace call --url URI} on every
 * transport: the server as a process, the calls in-process.
 */
class CallTransportsTest {

  @Test
  void everyTransport_reachedByUrl() throws Exception {
    String socket =
        Path.of(
                System.getProperty("java.io.tmpdir"),
                "mr-cli-" + ProcessHandle.current().pid() + ".sock")
            .toString();
    try (EchoServerProcess server =
        new EchoServerProcess(
            "--listen", "tcp://127.0.0.1:0",
            "--listen", "tls://127.0.0.1:0",
            "--listen", "ws://127.0.0.1:0/rsocket",
            "--listen", "wss://127.0.0.1:0/rsocket",
            "--listen", "unix://" + socket,
            "--tls-cert", path("server.pem").toString(),
            "--tls-key", path("server.key").toString())) {
      List<String> uris = server.listeners(5);
      assertThat(uris)
          .extracting(uri -> uri.substring(0, uri.indexOf(':')))
          .containsExactly("tcp", "tls", "ws", "wss", "unix");
      for (String uri : uris) {
        String[] tls =
            uri.startsWith("tls") || uri.startsWith("wss")
                ? new String[] {"--tls-ca", path("ca.pem").toString()}
                : new String[0];
        String[] stream =
            call(uri, tls, "--interaction", "request-stream", "--data", "3", "--request-n", "2");
        assertThat(stream[0]).as(uri).isEqualTo("0\n1\n2\n");
        assertThat(call(uri, tls, "--data", "hi")[0]).as(uri).isEqualTo("hi\n");
      }
      String tcpPort = uris.get(0).substring(uris.get(0).lastIndexOf(':') + 1);
      assertThat(
              call(
                  "ws://127.0.0.1:" + tcpPort + "/rsocket",
                  new String[0],
                  "--interaction",
                  "request-response",
                  "--data",
                  "shared")[0])
          .as("WebSocket on the tcp port")
          .isEqualTo("shared\n");
      String tlsUri = uris.get(1);
      String[] untrusted = call(tlsUri, new String[0], "--data", "who are you");
      assertThat(untrusted[1])
          .as("no --tls-ca: the JDK's trust store")
          .startsWith("cannot connect");
      assertThat(call(tlsUri, new String[] {"--tls-insecure"}, "--data", "any")[0])
          .isEqualTo("any\n");
    }
  }

  @Test
  void mutualTls_clientCertificateFromTheCa() throws Exception {
    try (EchoServerProcess server =
        new EchoServerProcess(
            "--listen", "tls://127.0.0.1:0",
            "--tls-cert", path("server.pem").toString(),
            "--tls-key", path("server.key").toString(),
            "--tls-ca", path("ca.pem").toString())) {
      String uri = server.listeners(1).get(0);
      String[] withCertificate =
          call(
              uri,
              new String[] {
                "--tls-ca", path("ca.pem").toString(),
                "--tls-cert", path("client.pem").toString(),
                "--tls-key", path("client.key").toString()
              },
              "--data",
              "mine");
      assertThat(withCertificate[0]).as(withCertificate[1]).isEqualTo("mine\n");
      String[] without =
          call(
              uri,
              new String[] {"--tls-ca", path("ca.pem").toString(), "--timeout", "5"},
              "--data",
              "x");
      assertThat(without[0]).isEmpty();
      assertThat(without[1]).isNotEmpty();
    }
  }

  @Test
  void contradictoryOptions_refusedWithAClearError() {
    String[] portBesideUrl =
        call("tcp://127.0.0.1:1", new String[] {"--port", "7000"}, "--data", "x");
    assertThat(portBesideUrl[1]).contains("--port is the shorthand for a tcp:// address");
    String[] insecureAndCa =
        call(
            "tls://127.0.0.1:1",
            new String[] {"--tls-insecure", "--tls-ca", path("ca.pem").toString()},
            "--data",
            "x");
    assertThat(insecureAndCa[1]).contains("--tls-insecure").contains("give one");
  }

  /** Runs {@code call --url uri} in-process: its stdout and stderr. */
  private static String[] call(String uri, String[] tls, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    List<String> full = new ArrayList<>(List.of("call", "--url", uri));
    full.addAll(List.of(tls));
    full.addAll(List.of(args));
    if (!full.contains("--interaction")) {
      full.addAll(List.of("--interaction", "request-response"));
    }
    new CommandLine(new Main())
        .setOut(new PrintWriter(out))
        .setErr(new PrintWriter(err))
        .execute(full.toArray(new String[0]));
    return new String[] {out.toString(), err.toString()};
  }
}
