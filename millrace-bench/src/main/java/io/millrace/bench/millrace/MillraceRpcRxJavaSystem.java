package io.millrace.bench.millrace;

import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceRxJava;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace RPC through the generated RxJava flavour: {@code Single.just}, {@code Flowable.generate}
 * and an echo on the server; lambdas per call and a batching subscriber on the client.
 */
public final class MillraceRpcRxJavaSystem extends RpcFlavourSystem {

  @Override
  public String name() {
    return "millrace-rpc-rxjava";
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return BenchServiceRxJava.bind(
        new BenchServiceRxJava.Service() {
          @Override
          public Single<BenchMessage> echo(BenchMessage request, ServerContext context) {
            handled.increment();
            return Single.just(reply);
          }

          @Override
          public Flowable<BenchMessage> stream(BenchMessage request, ServerContext context) {
            return Flowable.generate(
                emitter -> {
                  handled.increment();
                  emitter.onNext(reply);
                });
          }

          @Override
          public Flowable<BenchMessage> channel(
              Flowable<BenchMessage> requests, ServerContext context) {
            return requests.doOnNext(r -> handled.increment());
          }

          @Override
          public Completable send(BenchMessage request, ServerContext context) {
            handled.increment();
            return Completable.complete();
          }
        });
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    BenchServiceRxJava.Client bench = new BenchServiceRxJava.Client(rpc);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        bench.echo(request).subscribe(r -> onResponse.run(), e -> {});
      }

      @Override
      void fireAndForget() {
        bench.send(request).subscribe(() -> {}, e -> {});
      }

      @Override
      void startStream(LongAdder received) {
        MillraceRxJavaSystem.Batching<BenchMessage> consumer =
            new MillraceRxJavaSystem.Batching<>(received);
        onStop(consumer::dispose);
        bench.stream(request).subscribe(consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        MillraceRxJavaSystem.Batching<BenchMessage> consumer =
            new MillraceRxJavaSystem.Batching<>(received);
        onStop(consumer::dispose);
        bench.channel(Flowable.generate(emitter -> emitter.onNext(request))).subscribe(consumer);
      }
    };
  }
}
