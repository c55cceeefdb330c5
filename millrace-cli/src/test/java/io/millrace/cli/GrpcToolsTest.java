package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code millrace echo-server --grpc-port G} as a user runs it, in its own process, called by the
 * gRPC tools people use, with no .proto file: grpcurl (list, describe, calls of every interaction,
 * a failure, the health check) through server reflection, and ghz for a short load.
 */
class GrpcToolsTest {
  private static EchoServerProcess server;
  private static String target;
  private static Path grpcurl;

  @BeforeAll
  static void start() throws Exception {
    grpcurl = GoTools.install(GoTools.GRPCURL);
    server = new EchoServerProcess("--grpc-port", "0");
    target = "127.0.0.1:" + server.grpcPort();
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  /** grpcurl as people write it: {@code grpcurl -plaintext [flags] address [verb or method]}. */
  private static GoTools.Run grpcurl(String input, List<String> flags, String... after)
      throws Exception {
    List<String> args = new ArrayList<>();
    args.add("-plaintext");
    args.addAll(flags);
    args.add(target);
    args.addAll(List.of(after));
    return GoTools.run(grpcurl, input, args.toArray(String[]::new));
  }

  @Test
  void list_showsEchoService_health_andReflection() throws Exception {
    GoTools.Run run = grpcurl(null, List.of(), "list");
    assertThat(run.exitCode()).as(run.stderr()).isZero();
    assertThat(run.stdout().lines())
        .contains(
            "millrace.echo.v1.EchoService",
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection");
  }

  @Test
  void describe_givesTheServiceFromItsProtoFile() throws Exception {
    GoTools.Run run = grpcurl(null, List.of(), "describe", "millrace.echo.v1.EchoService");
    assertThat(run.exitCode()).as(run.stderr()).isZero();
    assertThat(run.stdout())
        .contains(
            "rpc Echo ( .millrace.echo.v1.EchoRequest ) returns ( .millrace.echo.v1.EchoReply )")
        .contains("rpc Chat ( stream .millrace.echo.v1.EchoRequest )");
  }

  @Test
  void sharedPort_grpcurlAndRSocketOnOnePort() throws Exception {
    try (EchoServerProcess shared = new EchoServerProcess("--grpc-shared")) {
      int port = shared.port();
      GoTools.Run echo =
          GoTools.run(
              grpcurl,
              null,
              "-plaintext",
              "-d",
              "{\"payload\":\"aGk=\"}",
              "127.0.0.1:" + port,
              "millrace.echo.v1.EchoService/Echo");
      assertThat(echo.exitCode()).as(echo.stderr()).isZero();
      assertThat(echo.stdout()).contains("\"payload\": \"aGk=\"");
      java.io.StringWriter out = new java.io.StringWriter();
      int code =
          new picocli.CommandLine(new Main())
              .setOut(new java.io.PrintWriter(out))
              .execute(
                  "call",
                  "--port",
                  Integer.toString(port),
                  "--interaction",
                  "request-response",
                  "--data",
                  "rsocket too");
      assertThat(code).isZero();
      assertThat(out.toString()).isEqualTo("rsocket too\n");
    }
  }

  @Test
  void calls_everyInteraction_fromJson() throws Exception {
    GoTools.Run echo =
        grpcurl(null, List.of("-d", "{\"payload\":\"aGk=\"}"), "millrace.echo.v1.EchoService/Echo");
    assertThat(echo.exitCode()).as(echo.stderr()).isZero();
    assertThat(echo.stdout()).contains("\"payload\": \"aGk=\"");

    GoTools.Run count =
        grpcurl(null, List.of("-d", "{\"n\":3}"), "millrace.echo.v1.EchoService/Count");
    assertThat(count.exitCode()).as(count.stderr()).isZero();
    assertThat(count.stdout()).contains("\"sequence\": \"1\"").contains("\"sequence\": \"2\"");

    String two = "{\"payload\":\"YQ==\"}\n{\"payload\":\"Yg==\"}\n";
    GoTools.Run collect = grpcurl(two, List.of("-d", "@"), "millrace.echo.v1.EchoService/Collect");
    assertThat(collect.exitCode()).as(collect.stderr()).isZero();
    assertThat(collect.stdout()).contains("\"payload\": \"YWI=\"").contains("\"sequence\": \"2\"");

    GoTools.Run chat = grpcurl(two, List.of("-d", "@"), "millrace.echo.v1.EchoService/Chat");
    assertThat(chat.exitCode()).as(chat.stderr()).isZero();
    assertThat(chat.stdout()).contains("\"payload\": \"Yg==\"").contains("\"sequence\": \"1\"");
  }

  @Test
  void aFailure_isTheStatusWithItsUtf8Message() throws Exception {
    GoTools.Run run =
        grpcurl(
            null,
            List.of("-d", "{\"fail_with_status\":7,\"fail_message\":\"nicht für dich ✓ 100%\"}"),
            "millrace.echo.v1.EchoService/Echo");
    assertThat(run.exitCode()).isEqualTo(64 + 7); // grpcurl exits 64 + the status code
    assertThat(run.stderr()).contains("PermissionDenied").contains("nicht für dich ✓ 100%");
  }

  @Test
  void healthCheck_isServing() throws Exception {
    GoTools.Run run = grpcurl(null, List.of(), "grpc.health.v1.Health/Check");
    assertThat(run.exitCode()).as(run.stderr()).isZero();
    assertThat(run.stdout()).contains("\"status\": \"SERVING\"");
  }

  @Test
  void ghz_runsALoadWithoutTheProtoFile_andEveryCallSucceeds() throws Exception {
    Path ghz = GoTools.install(GoTools.GHZ);
    GoTools.Run run =
        GoTools.run(
            ghz,
            null,
            "--insecure",
            "--call",
            "millrace.echo.v1.EchoService/Echo",
            "-d",
            "{\"payload\":\"aGk=\"}",
            "-n",
            "2000",
            "-c",
            "10",
            "--format",
            "json",
            target);
    assertThat(run.exitCode()).as(run.stderr()).isZero();
    assertThat(run.stdout())
        .contains("\"count\":2000")
        .contains("\"statusCodeDistribution\":{\"OK\":2000}");
  }

  @Test
  void sigterm_withTheGrpcEndpoint_stillExitsZero() throws Exception {
    try (EchoServerProcess other =
        new EchoServerProcess("--grpc-port", "0", "--drain-timeout", "1")) {
      other.grpcPort();
      other.process.destroy(); // SIGTERM
      String output = other.awaitExit();
      assertThat(other.process.exitValue()).as(output).isZero();
      assertThat(output).contains("stopped");
    }
  }
}
