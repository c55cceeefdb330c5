package io.millrace.bench.millrace;

import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceMutiny;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace RPC through the generated Mutiny flavour: {@code Uni.createFrom().item}, a {@code Multi}
 * generator and an echo on the server; callbacks per call and a batching subscriber on the client.
 */
public final class MillraceRpcMutinySystem extends RpcFlavourSystem {

  @Override
  public String name() {
    return "millrace-rpc-mutiny";
  }

  private static Multi<BenchMessage> endless(BenchMessage message, Runnable each) {
    return Multi.createFrom()
        .generator(
            () -> message,
            (state, emitter) -> {
              each.run();
              emitter.emit(state);
              return state;
            });
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return BenchServiceMutiny.bind(
        new BenchServiceMutiny.Service() {
          @Override
          public Uni<BenchMessage> echo(BenchMessage request, ServerContext context) {
            handled.increment();
            return Uni.createFrom().item(reply);
          }

          @Override
          public Multi<BenchMessage> stream(BenchMessage request, ServerContext context) {
            return endless(reply, handled::increment);
          }

          @Override
          public Multi<BenchMessage> channel(Multi<BenchMessage> requests, ServerContext context) {
            return requests.onItem().invoke(r -> handled.increment());
          }

          @Override
          public Uni<Void> send(BenchMessage request, ServerContext context) {
            handled.increment();
            return Uni.createFrom().voidItem();
          }
        });
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    BenchServiceMutiny.Client bench = new BenchServiceMutiny.Client(rpc);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        bench.echo(request).subscribe().with(r -> onResponse.run(), e -> {});
      }

      @Override
      void fireAndForget() {
        bench.send(request).subscribe().with(v -> {}, e -> {});
      }

      @Override
      void startStream(LongAdder received) {
        MillraceMutinySystem.Batching<BenchMessage> consumer =
            new MillraceMutinySystem.Batching<>(received);
        onStop(consumer::cancel);
        bench.stream(request).subscribe().withSubscriber(consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        MillraceMutinySystem.Batching<BenchMessage> consumer =
            new MillraceMutinySystem.Batching<>(received);
        onStop(consumer::cancel);
        bench.channel(endless(request, () -> {})).subscribe().withSubscriber(consumer);
      }
    };
  }
}
