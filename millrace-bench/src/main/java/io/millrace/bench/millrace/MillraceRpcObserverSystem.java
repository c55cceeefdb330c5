package io.millrace.bench.millrace;

import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace RPC through the generated StreamObserver flavour, used as a grpc-java user would: the
 * unary handler calls {@code onNext} and {@code onCompleted}, the streaming one sends from its
 * on-ready handler while {@code isReady()}, the channel echoes each request as it comes; the client
 * passes a new observer per call, receives with automatic flow control, and sends a channel's
 * requests from its on-ready handler.
 */
public final class MillraceRpcObserverSystem extends RpcFlavourSystem {

  @Override
  public String name() {
    return "millrace-rpc-observer";
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return BenchServiceObserver.bind(
        new BenchServiceObserver.Service() {
          @Override
          public void echo(
              BenchMessage request,
              ServerContext context,
              ServerCallStreamObserver<BenchMessage> responses) {
            handled.increment();
            responses.onNext(reply);
            responses.onCompleted();
          }

          @Override
          public void stream(
              BenchMessage request,
              ServerContext context,
              ServerCallStreamObserver<BenchMessage> responses) {
            responses.setOnReadyHandler(
                () -> {
                  while (responses.isReady() && !responses.isCancelled()) {
                    handled.increment();
                    responses.onNext(reply);
                  }
                });
          }

          @Override
          public StreamObserver<BenchMessage> channel(
              ServerContext context, ServerCallStreamObserver<BenchMessage> responses) {
            return new StreamObserver<>() {
              @Override
              public void onNext(BenchMessage value) {
                handled.increment();
                responses.onNext(value);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {
                responses.onCompleted();
              }
            };
          }

          @Override
          public void send(BenchMessage request, ServerContext context) {
            handled.increment();
          }
        });
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    BenchServiceObserver.Client bench = new BenchServiceObserver.Client(rpc);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        bench.echo(
            request,
            new StreamObserver<>() {
              @Override
              public void onNext(BenchMessage value) {
                onResponse.run();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
      }

      @Override
      void fireAndForget() {
        bench.send(request);
      }

      @Override
      void startStream(LongAdder received) {
        MillraceObserverSystem.Counting<BenchMessage, BenchMessage> consumer =
            new MillraceObserverSystem.Counting<>(received, null);
        onStop(consumer::cancel);
        bench.stream(request, consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        MillraceObserverSystem.Counting<BenchMessage, BenchMessage> consumer =
            new MillraceObserverSystem.Counting<>(received, () -> request);
        onStop(consumer::cancel);
        bench.channel(consumer);
      }
    };
  }
}
