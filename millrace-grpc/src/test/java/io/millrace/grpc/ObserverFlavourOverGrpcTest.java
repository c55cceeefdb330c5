package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The StreamObserver flavour's handlers (which run their signals on the call's loop) behind the
 * gRPC endpoint, called by grpc-java's async stub: the flavour most like grpc-java's own.
 */
class ObserverFlavourOverGrpcTest {

  /** Echo and Chat as a grpc-java user would write them in Millrace's observer flavour. */
  static final class Echo implements EchoServiceObserver.Service {
    @Override
    public void echo(
        EchoRequest request, ServerContext context, ServerCallStreamObserver<EchoReply> out) {
      if (request.getPayload().toStringUtf8().equals("sleep")) {
        try {
          Thread.sleep(5); // blocking handler code: it needs the server's handler executor
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      out.onNext(EchoReply.newBuilder().setPayload(request.getPayload()).build());
      out.onCompleted();
    }

    @Override
    public void count(
        CountRequest request, ServerContext context, ServerCallStreamObserver<EchoReply> out) {
      for (int i = 0; i < request.getN(); i++) {
        out.onNext(EchoReply.newBuilder().setSequence(i).build());
      }
      out.onCompleted();
    }

    @Override
    public StreamObserver<EchoRequest> collect(
        ServerContext context, ServerCallStreamObserver<EchoReply> out) {
      return chat(context, out);
    }

    @Override
    public StreamObserver<EchoRequest> chat(
        ServerContext context, ServerCallStreamObserver<EchoReply> out) {
      return new StreamObserver<>() {
        long sequence;

        @Override
        public void onNext(EchoRequest value) {
          out.onNext(
              EchoReply.newBuilder()
                  .setPayload(value.getPayload())
                  .setSequence(sequence++)
                  .build());
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }

    @Override
    public void notify(EchoRequest request, ServerContext context) {}
  }

  @Test
  void blockingHandlers_runOnTheServersHandlerExecutor_behindTheEndpoint() throws Exception {
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    RpcServer rpc =
        RpcServer.builder()
            .service(EchoServiceObserver.bind(new Echo()))
            .streamsOptions(
                io.millrace.streams.StreamsOptions.builder().handlerExecutor(pool).build())
            .build();
    try (GrpcEndpoint endpoint =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start()) {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
      try {
        EchoServiceGrpc.EchoServiceFutureStub stub = EchoServiceGrpc.newFutureStub(channel);
        List<com.google.common.util.concurrent.ListenableFuture<EchoReply>> calls =
            new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          calls.add(
              stub.echo(
                  EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8("sleep")).build()));
        }
        for (var call : calls) {
          assertThat(call.get(10, TimeUnit.SECONDS).getPayload().toStringUtf8()).isEqualTo("sleep");
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void bidi_throughTheEndpoint_echoesEveryMessage() throws Exception {
    RpcServer rpc = RpcServer.builder().service(EchoServiceObserver.bind(new Echo())).build();
    try (GrpcEndpoint endpoint =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start()) {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
      try {
        EchoServiceGrpc.EchoServiceBlockingStub blocking =
            EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
        assertThat(
                blocking
                    .echo(EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8("a")).build())
                    .getPayload()
                    .toStringUtf8())
            .isEqualTo("a");
        List<EchoReply> got = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        io.grpc.stub.StreamObserver<EchoRequest> chat =
            EchoServiceGrpc.newStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .chat(
                    new io.grpc.stub.StreamObserver<>() {
                      @Override
                      public synchronized void onNext(EchoReply value) {
                        got.add(value);
                      }

                      @Override
                      public void onError(Throwable t) {
                        done.completeExceptionally(t);
                      }

                      @Override
                      public void onCompleted() {
                        done.complete(null);
                      }
                    });
        for (int i = 0; i < 1000; i++) {
          chat.onNext(
              EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8("m" + i)).build());
        }
        chat.onCompleted();
        done.get(10, TimeUnit.SECONDS);
        assertThat(got).hasSize(1000);
        assertThat(got.get(999).getSequence()).isEqualTo(999);
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
