package io.millrace.bench.millrace;

import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceReactor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Millrace RPC through the generated Reactor flavour: {@code Mono.just}, {@code Flux.generate} and
 * an echo on the server; callbacks per call and a batching subscriber (as the other Reactor
 * systems') on the client.
 */
public final class MillraceRpcSystem extends RpcFlavourSystem {

  @Override
  public String name() {
    return "millrace-rpc";
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return reactorService(reply, handled);
  }

  /**
   * The bench service this system serves, as an RpcServer answering {@code payloadSize}-byte
   * messages: what the gRPC endpoint system serves to grpc-java's client.
   */
  public static io.millrace.rpc.RpcServer benchServer(int payloadSize, LongAdder handled) {
    io.netty.buffer.ByteBuf payload = MillraceSystem.payload(payloadSize);
    try {
      return io.millrace.rpc.RpcServer.builder()
          .service(reactorService(message(payload), handled))
          .build();
    } finally {
      payload.unwrap().release();
    }
  }

  static ServiceDefinition reactorService(BenchMessage reply, LongAdder handled) {
    return BenchServiceReactor.bind(
        new BenchServiceReactor.Service() {
          @Override
          public Mono<BenchMessage> echo(BenchMessage request, ServerContext context) {
            handled.increment();
            return Mono.just(reply);
          }

          @Override
          public Flux<BenchMessage> stream(BenchMessage request, ServerContext context) {
            return Flux.generate(
                sink -> {
                  handled.increment();
                  sink.next(reply);
                });
          }

          @Override
          public Flux<BenchMessage> channel(Flux<BenchMessage> requests, ServerContext context) {
            return requests.doOnNext(r -> handled.increment());
          }

          @Override
          public Mono<Void> send(BenchMessage request, ServerContext context) {
            handled.increment();
            return Mono.empty();
          }
        });
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    BenchServiceReactor.Client bench = new BenchServiceReactor.Client(rpc);
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
