package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceMutiny;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.echo.v1.EchoServiceRxJava;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
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
  private RpcOverTcp tcp;
  private RpcClient rpc;
  private EchoServiceReactor.Client echo;

  @BeforeEach
  void start() throws Exception {
    tcp = RpcOverTcp.serve(RpcServer.builder().service(EchoServiceReactor.bind(impl)).build());
    rpc = tcp.client();
    echo = new EchoServiceReactor.Client(rpc);
  }

  @AfterEach
  void stop() {
    tcp.close();
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

  @Test
  void theRxJavaAndMutinyClients_callTheSameService() {
    EchoServiceRxJava.Client rx = new EchoServiceRxJava.Client(rpc);
    EchoServiceMutiny.Client mutiny = new EchoServiceMutiny.Client(rpc);
    assertThat(rx.echo(request("rx")).blockingGet().getPayload().toStringUtf8()).isEqualTo("rx");
    assertThat(rx.count(CountRequest.newBuilder().setN(3).build()).toList().blockingGet())
        .hasSize(3);
    assertThat(
            rx.collect(io.reactivex.rxjava3.core.Flowable.just(request("x"), request("y")))
                .blockingGet()
                .getPayload()
                .toStringUtf8())
        .isEqualTo("xy");
    rx.notify(request("n")).blockingAwait();
    assertThat(mutiny.echo(request("uni")).await().atMost(WAIT).getPayload().toStringUtf8())
        .isEqualTo("uni");
    assertThat(
            mutiny
                .chat(io.smallrye.mutiny.Multi.createFrom().items(request("a"), request("b")))
                .collect()
                .asList()
                .await()
                .atMost(WAIT))
        .hasSize(2);
    assertThatThrownBy(
            () ->
                mutiny
                    .echo(EchoRequest.newBuilder().setFailWithStatus(5).build())
                    .await()
                    .atMost(WAIT))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> assertThat(e.status().code()).isEqualTo(Status.Code.NOT_FOUND));
  }

  @Test
  void aServiceWrittenInRxJava_isServedToo() throws Exception {
    RpcServer rxRpc =
        RpcServer.builder()
            .service(
                EchoServiceRxJava.bind(
                    new EchoServiceRxJava.Service() {
                      @Override
                      public io.reactivex.rxjava3.core.Single<EchoReply> echo(
                          EchoRequest request, io.millrace.rpc.ServerContext context) {
                        return io.reactivex.rxjava3.core.Single.just(
                            EchoReply.newBuilder().setPayload(request.getPayload()).build());
                      }

                      @Override
                      public io.reactivex.rxjava3.core.Flowable<EchoReply> count(
                          CountRequest request, io.millrace.rpc.ServerContext context) {
                        return io.reactivex.rxjava3.core.Flowable.range(0, request.getN())
                            .map(i -> EchoReply.newBuilder().setSequence(i).build());
                      }

                      @Override
                      public io.reactivex.rxjava3.core.Single<EchoReply> collect(
                          io.reactivex.rxjava3.core.Flowable<EchoRequest> requests,
                          io.millrace.rpc.ServerContext context) {
                        return requests
                            .count()
                            .map(n -> EchoReply.newBuilder().setSequence(n).build());
                      }

                      @Override
                      public io.reactivex.rxjava3.core.Flowable<EchoReply> chat(
                          io.reactivex.rxjava3.core.Flowable<EchoRequest> requests,
                          io.millrace.rpc.ServerContext context) {
                        return requests.map(
                            r -> EchoReply.newBuilder().setPayload(r.getPayload()).build());
                      }

                      @Override
                      public io.reactivex.rxjava3.core.Completable notify(
                          EchoRequest request, io.millrace.rpc.ServerContext context) {
                        return io.reactivex.rxjava3.core.Completable.complete();
                      }
                    }))
            .build();
    RpcOverTcp rxServer = RpcOverTcp.serve(rxRpc);
    try {
      EchoServiceReactor.Client c = new EchoServiceReactor.Client(rxServer.client());
      assertThat(c.echo(request("via rx")).block(WAIT).getPayload().toStringUtf8())
          .isEqualTo("via rx");
      assertThat(c.collect(Flux.range(0, 7).map(i -> request("r"))).block(WAIT).getSequence())
          .isEqualTo(7);
      assertThat(c.count(CountRequest.newBuilder().setN(4).build()).count().block(WAIT))
          .isEqualTo(4);
    } finally {
      rxServer.close();
    }
  }
}
