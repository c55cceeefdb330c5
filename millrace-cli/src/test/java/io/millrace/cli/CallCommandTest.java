package io.millrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs {@code millrace call} in-process against real TCP servers. */
class CallCommandTest {
  private static MillraceServer echo;
  private static MillraceServer recording;
  private static final List<String> recorded = new CopyOnWriteArrayList<>();
  private static volatile CountDownLatch cancelled = new CountDownLatch(1);

  /**
   * Records what the CLI does: credits it grants, fire-and-forget, cancel; "hang" never answers.
   */
  private static final class RecordingResponder implements Responder {
    @Override
    public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
      recorded.add("fnf " + data.toString(StandardCharsets.UTF_8));
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      return null; // never answers
    }

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      long total = Long.parseLong(data.toString(StandardCharsets.UTF_8));
      return new StreamListener() {
        long sent;

        @Override
        public void onReady(Stream s) {
          recorded.add("credit " + s.credit());
          while (s.isReady() && sent < total) {
            ByteBuf item = ByteBufUtil.writeAscii(s.connection().alloc(), Long.toString(sent++));
            if (sent == total) {
              s.nextAndComplete(null, item);
            } else {
              s.next(null, item);
            }
          }
        }

        @Override
        public void onCancel(Stream s) {
          recorded.add("cancel after " + sent);
          cancelled.countDown();
        }
      };
    }
  }

  @BeforeAll
  static void startServers() throws InterruptedException {
    EchoResponder responder = new EchoResponder();
    echo = MillraceServer.builder().acceptor((setup, connection) -> responder).bind();
    RecordingResponder recorder = new RecordingResponder();
    recording = MillraceServer.builder().acceptor((setup, connection) -> recorder).bind();
  }

  @AfterAll
  static void stopServers() {
    echo.close();
    recording.close();
  }

  private record Result(int code, String out, String err) {}

  private static Result call(MillraceServer server, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    String[] full = new String[args.length + 3];
    full[0] = "call";
    full[1] = "--port";
    full[2] = Integer.toString(server.port());
    System.arraycopy(args, 0, full, 3, args.length);
    int code =
        new CommandLine(new Main())
            .setOut(new PrintWriter(out))
            .setErr(new PrintWriter(err))
            .execute(full);
    return new Result(code, out.toString(), err.toString());
  }

  @Test
  void requestResponse_withMetadata_printsDataTabMetadata() {
    Result r =
        call(echo, "--interaction", "request-response", "--data", "hello", "--metadata", "meta");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("hello\tmeta\n");
  }

  @Test
  void requestResponse_withoutMetadata_printsDataOnly() {
    Result r = call(echo, "--interaction", "request-response", "--data", "héllo wörld");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("héllo wörld\n");
  }

  @Test
  void requestResponse_errorPrefix_printsErrorAndExitsOne() {
    Result r = call(echo, "--interaction", "request-response", "--data", "error:boom");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo("ERROR 0x00000201 boom\n");
  }

  @Test
  void requestStream_countAndMetadata_printsEachThenCompletes() {
    Result r =
        call(
            echo,
            "--interaction",
            "request-stream",
            "--data",
            "5",
            "--metadata",
            "m",
            "--request-n",
            "2");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("0\tm\n1\tm\n2\tm\n3\tm\n4\tm\n");
  }

  @Test
  void requestStream_nonNumeric_applicationError() {
    Result r = call(echo, "--interaction", "request-stream", "--data", "abc");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).startsWith("ERROR 0x00000201 ");
  }

  @Test
  void requestStream_requestN_grantsNThenNMoreEachTimeNArrived() {
    recorded.clear();
    Result r =
        call(recording, "--interaction", "request-stream", "--data", "5", "--request-n", "2");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("0\n1\n2\n3\n4\n");
    assertThat(recorded).containsExactly("credit 2", "credit 2", "credit 2");
  }

  @Test
  void requestStream_take_cancelsAfterK() throws InterruptedException {
    recorded.clear();
    cancelled = new CountDownLatch(1);
    Result r =
        call(
            recording,
            "--interaction",
            "request-stream",
            "--data",
            "1000000",
            "--request-n",
            "10",
            "--take",
            "3");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("0\n1\n2\n");
    assertThat(cancelled.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(recorded).contains("cancel after 10");
  }

  @Test
  void requestChannel_inputs_echoedAfterFirstThenCompletes() {
    Result r =
        call(
            echo,
            "--interaction",
            "request-channel",
            "--data",
            "first",
            "--metadata",
            "m0",
            "--inputs",
            "a,b,c");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("first\tm0\na\nb\nc\n");
  }

  @Test
  void requestChannel_noInputs_echoesFirstAndCompletes() {
    Result r = call(echo, "--interaction", "request-channel", "--data", "only");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEqualTo("only\n");
  }

  @Test
  void fireAndForget_printsNothingAndServerReceivesIt() throws InterruptedException {
    recorded.clear();
    Result r = call(recording, "--interaction", "fire-and-forget", "--data", "ping");
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEmpty();
    for (int i = 0; i < 100 && !recorded.contains("fnf ping"); i++) {
      Thread.sleep(20);
    }
    assertThat(recorded).contains("fnf ping");
  }

  @Test
  void noCompletion_exitsTwoAfterTimeout() {
    Result r =
        call(recording, "--interaction", "request-response", "--data", "x", "--timeout", "1");
    assertThat(r.code()).isEqualTo(2);
  }

  @Test
  void nothingListening_exitsThree() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new Main())
            .setOut(new PrintWriter(new StringWriter()))
            .setErr(new PrintWriter(err))
            .execute(
                "call",
                "--port",
                Integer.toString(port),
                "--interaction",
                "request-response",
                "--data",
                "x");
    assertThat(code).isEqualTo(3);
    assertThat(err.toString()).contains("cannot connect");
  }

  @Test
  void unknownInteraction_usageError() {
    Result r = call(echo, "--interaction", "teleport", "--data", "x");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("unknown interaction 'teleport'");
  }
}
