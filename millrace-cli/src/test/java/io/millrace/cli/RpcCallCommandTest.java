package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.transport.netty.MillraceServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code millrace call --rpc} against the echo server's acceptor, in-process over TCP. */
class RpcCallCommandTest {
  private static MillraceServer server;

  @BeforeAll
  static void start() throws InterruptedException {
    server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .acceptor(EchoServerCommand.acceptor(EchoServerCommand.echoRpc()))
            .bind();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private record Result(int code, String out, String err) {}

  private static Result call(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    String[] full = new String[args.length + 5];
    full[0] = "call";
    full[1] = "--port";
    full[2] = Integer.toString(server.port());
    full[3] = "--timeout";
    full[4] = "10";
    System.arraycopy(args, 0, full, 5, args.length);
    int code =
        new CommandLine(new Main())
            .setOut(new PrintWriter(out))
            .setErr(new PrintWriter(err))
            .execute(full);
    return new Result(code, out.toString(), err.toString());
  }

  @Test
  void echo_printsTheReplyAsOneJsonLine() {
    Result r =
        call("--rpc", "millrace.echo.v1.EchoService/Echo", "--json", "{\"payload\":\"aGk=\"}");
    assertThat(r.err()).isEmpty();
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("{\"payload\":\"aGk=\"}\n");
  }

  @Test
  void aFailedCall_printsItsStatus_andExitsOne() {
    Result r =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Echo",
            "--json",
            "{\"failWithStatus\":5,\"failMessage\":\"no such thing\"}");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo("NOT_FOUND: no such thing\n");
  }

  @Test
  void routedCalls_likeRsocketJavasAndSprings_reachTheSameMethods() {
    Result r =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Echo",
            "--metadata-mime",
            "message/x.rsocket.composite-metadata.v0",
            "--json",
            "{\"payload\":\"aGk=\"}");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out().trim()).isEqualTo("{\"payload\":\"aGk=\"}");
    Result failed =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Echo",
            "--metadata-mime",
            "message/x.rsocket.composite-metadata.v0",
            "--json",
            "{\"failWithStatus\":5,\"failMessage\":\"gone\"}");
    assertThat(failed.code()).isEqualTo(1);
    assertThat(failed.err()).contains("NOT_FOUND").contains("gone");
    Result other =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Echo",
            "--metadata-mime",
            "application/json",
            "--json",
            "{}");
    assertThat(other.code()).isEqualTo(2);
    assertThat(other.err()).contains("--rpc calls with metadata");
  }

  @Test
  void count_printsALinePerReply() {
    Result r = call("--rpc", "millrace.echo.v1.EchoService/Count", "--json", "{\"n\":3}");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("{}\n{\"sequence\":\"1\"}\n{\"sequence\":\"2\"}\n");
  }

  @Test
  void collect_andChat_takeRepeatedJson() {
    Result collect =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Collect",
            "--json",
            "{\"payload\":\"YQ==\"}",
            "--json",
            "{\"payload\":\"Yg==\"}");
    assertThat(collect.code()).isZero();
    assertThat(collect.out()).isEqualTo("{\"payload\":\"YWI=\",\"sequence\":\"2\"}\n");
    Result chat =
        call(
            "--rpc",
            "millrace.echo.v1.EchoService/Chat",
            "--json",
            "{\"payload\":\"YQ==\"}",
            "--json",
            "{\"payload\":\"Yg==\"}");
    assertThat(chat.out())
        .isEqualTo("{\"payload\":\"YQ==\"}\n{\"payload\":\"Yg==\",\"sequence\":\"1\"}\n");
  }

  @Test
  void anUnknownMethod_isAUsageError_andTheRawEchoStillAnswers() {
    Result r = call("--rpc", "millrace.echo.v1.EchoService/Nope", "--json", "{}");
    assertThat(r.code()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(r.err()).contains("unknown RPC method").contains("EchoService/Echo");
    Result raw = call("--interaction", "request-response", "--data", "plain");
    assertThat(raw.out()).isEqualTo("plain\n");
  }

  @Test
  void badJsonOrTooManyRequests_areUsageErrors_foundBeforeConnecting() {
    Result bad = call("--rpc", "millrace.echo.v1.EchoService/Echo", "--json", "{\"nope\":1}");
    assertThat(bad.code()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(bad.err()).contains("not a millrace.echo.v1.EchoService/Echo request");
    Result two = call("--rpc", "millrace.echo.v1.EchoService/Echo", "--json", "{}", "--json", "{}");
    assertThat(two.code()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(two.err()).contains("takes one request");
  }
}
