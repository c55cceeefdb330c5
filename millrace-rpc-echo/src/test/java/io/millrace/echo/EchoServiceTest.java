package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.core.ConnectionConfig;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.TcpClient;
import io.millrace.transport.netty.TcpServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** The echo service through the code the protoc plugin generated for it, over TCP. */
class EchoServiceTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final EchoServiceImpl impl = new EchoServiceImpl();
  private TcpServer server;
  private TcpClient client;
  private EchoServiceReactor.Client echo;

  @BeforeEach
  void start() throws Exception {
    RpcServer rpc = RpcServer.builder().service(EchoServiceReactor.bind(impl)).build();
    server =
        TcpServer.builder()
            .bindAddress("127.0.0.1", 0)
            .acceptor(rpc::responder)
            .eventLoopThreads(1)
            .bind();
    client =
        TcpClient.builder()
            .config(
                ConnectionConfig.builder()
                    .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
                    .build())
            .build();
    echo =
        new EchoServiceReactor.Client(
            RpcClient.of(
                ReactiveRequester.of(
                    client.connect("127.0.0.1", server.port()).get(10, TimeUnit.SECONDS))));
  }

  @AfterEach
  void stop() throws InterruptedException {
    client.shutdownNow();
    server.shutdownNow();
    client.awaitTermination(10, TimeUnit.SECONDS);
    server.awaitTermination(10, TimeUnit.SECONDS);
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void echo_returnsThePayload() {
    assertThat(echo.echo(request("hi")).block(WAIT).getPayload().toStringUtf8()).isEqualTo("hi");
  }

  @Test
  void echo_failsWithTheStatusAsked() {
    EchoRequest failing =
        EchoRequest.newBuilder()
            .setFailWithStatus(Status.Code.PERMISSION_DENIED.value())
            .setFailMessage("not you")
            .build();
    assertThatThrownBy(() -> echo.echo(failing).block(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.PERMISSION_DENIED);
              assertThat(e.status().message()).isEqualTo("not you");
            });
  }

  @Test
  void count_sendsNRepliesInOrder_andANegativeNIsInvalid() {
    assertThat(
            echo.count(CountRequest.newBuilder().setN(500).build())
                .map(EchoReply::getSequence)
                .collectList()
                .block(WAIT))
        .hasSize(500)
        .startsWith(0L, 1L)
        .endsWith(499L);
    assertThatThrownBy(() -> echo.count(CountRequest.newBuilder().setN(-1).build()).blockLast(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }

  @Test
  void collect_concatenatesInOrder_andCounts() {
    EchoReply reply =
        echo.collect(Flux.just("a", "b", "c").map(EchoServiceTest::request)).block(WAIT);
    assertThat(reply.getPayload().toStringUtf8()).isEqualTo("abc");
    assertThat(reply.getSequence()).isEqualTo(3);
  }

  @Test
  void chat_echoesEachRequestAsItArrives() {
    assertThat(
            echo.chat(Flux.range(0, 100).map(i -> request("m" + i)))
                .map(r -> r.getSequence() + ":" + r.getPayload().toStringUtf8())
                .collectList()
                .block(WAIT))
        .hasSize(100)
        .startsWith("0:m0", "1:m1")
        .endsWith("99:m99");
  }

  @Test
  void notify_isCountedByTheServer() throws Exception {
    for (int i = 0; i < 10; i++) {
      echo.notify(request("n")).block(WAIT);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (impl.notified() < 10 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(impl.notified()).isEqualTo(10);
  }
}
