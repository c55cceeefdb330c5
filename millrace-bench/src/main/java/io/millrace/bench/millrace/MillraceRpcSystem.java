package io.millrace.bench.millrace;

import com.google.protobuf.ByteString;
import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceReactor;
import io.millrace.core.Acceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.streams.ReactiveRequester;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Millrace RPC, used as a user of the generated Reactor flavour would: {@code bench.proto}'s
 * BenchService compiled by Millrace's protoc plugin, a message of the run's payload size each way,
 * the call header on every request and protobuf on both sides. Its streams and channels request as
 * the other Reactor systems' do.
 */
public final class MillraceRpcSystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-rpc";
  }

  private static BenchMessage message(ByteBuf payload) {
    return BenchMessage.newBuilder()
        .setPayload(ByteString.copyFrom(ByteBufUtil.getBytes(payload)))
        .build();
  }

  @Override
  Acceptor acceptor(ByteBuf response, LongAdder handled) {
    BenchMessage reply = message(response);
    RpcServer rpc =
        RpcServer.builder()
            .service(
                BenchServiceReactor.bind(
                    new BenchServiceReactor.Service() {
                      @Override
                      public Mono<BenchMessage> echo(BenchMessage request, ServerContext context) {
                        handled.increment();
                        return Mono.just(reply);
                      }

                      @Override
                      public Flux<BenchMessage> stream(
                          BenchMessage request, ServerContext context) {
                        return Flux.generate(
                            sink -> {
                              handled.increment();
                              sink.next(reply);
                            });
                      }

                      @Override
                      public Flux<BenchMessage> channel(
                          Flux<BenchMessage> requests, ServerContext context) {
                        return requests.doOnNext(r -> handled.increment());
                      }

                      @Override
                      public Mono<Void> send(BenchMessage request, ServerContext context) {
                        handled.increment();
                        return Mono.empty();
                      }
                    }))
            .build();
    return rpc::responder;
  }

  @Override
  ConnectionConfig clientConfig() {
    return ConnectionConfig.builder()
        .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
        .build();
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    BenchMessage request = message(payload);
    BenchServiceReactor.Client bench =
        new BenchServiceReactor.Client(RpcClient.of(ReactiveRequester.of(connection)));
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        bench.echo(request).subscribe(r -> onResponse.run());
      }

      @Override
      void fireAndForget() {
        bench.send(request).subscribe();
      }

      @Override
      void startStream(LongAdder received) {
        MillraceReactorSystem.Batching<BenchMessage> consumer =
            new MillraceReactorSystem.Batching<>(received);
        onStop(consumer::dispose);
        bench.stream(request).subscribe(consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        MillraceReactorSystem.Batching<BenchMessage> consumer =
            new MillraceReactorSystem.Batching<>(received);
        onStop(consumer::dispose);
        bench.channel(Flux.generate(sink -> sink.next(request))).subscribe(consumer);
      }
    };
  }
}
