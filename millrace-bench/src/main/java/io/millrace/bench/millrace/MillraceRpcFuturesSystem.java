package io.millrace.bench.millrace;

import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceFutures;
import io.millrace.rpc.Blocking;
import io.millrace.rpc.MessageIterator;
import io.millrace.rpc.ResponseSink;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.ServiceDefinition;
import java.util.Iterator;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace RPC through the generated CompletableFuture and blocking flavour, used as its users
 * would: blocking handlers on an executor (virtual threads on JDK 21+, else a thread pool: the hop
 * to it is part of every call), a stream sent through the sink that waits for demand, a channel
 * read through its iterator. The client attaches a callback to each {@code echoAsync} future, sends
 * fire-and-forget with {@code sendAsync}, and reads streams and channels through their blocking
 * iterators on a thread of their own.
 */
public final class MillraceRpcFuturesSystem extends RpcFlavourSystem {
  private static final Executor HANDLERS = Blocking.newHandlerExecutor("bench-rpc-handler");

  @Override
  public String name() {
    return "millrace-rpc-futures";
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return BenchServiceFutures.bind(
        new BenchServiceFutures.Service() {
          @Override
          public BenchMessage echo(BenchMessage request, ServerContext context) {
            handled.increment();
            return reply;
          }

          @Override
          public void stream(
              BenchMessage request, ServerContext context, ResponseSink<BenchMessage> responses) {
            while (true) { // until the caller cancels: send then throws CANCELLED
              responses.send(reply);
              handled.increment();
            }
          }

          @Override
          public void channel(
              MessageIterator<BenchMessage> requests,
              ServerContext context,
              ResponseSink<BenchMessage> responses) {
            while (requests.hasNext()) {
              responses.send(requests.next());
              handled.increment();
            }
          }

          @Override
          public void send(BenchMessage request, ServerContext context) {
            handled.increment();
          }
        },
        HANDLERS);
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    BenchServiceFutures.Client bench = new BenchServiceFutures.Client(rpc);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        bench.echoAsync(request).thenRun(onResponse);
      }

      @Override
      void fireAndForget() {
        bench.sendAsync(request);
      }

      @Override
      void startStream(LongAdder received) {
        read(() -> bench.stream(request), received);
      }

      @Override
      void startChannel(LongAdder received) {
        Iterable<BenchMessage> endless =
            () ->
                new Iterator<>() {
                  @Override
                  public boolean hasNext() {
                    return true;
                  }

                  @Override
                  public BenchMessage next() {
                    return request;
                  }
                };
        read(() -> bench.channel(endless), received);
      }

      /** Reads the call's responses on a thread of its own until the run ends. */
      private void read(
          java.util.function.Supplier<MessageIterator<BenchMessage>> call, LongAdder received) {
        Thread t =
            new Thread(
                () -> {
                  try (MessageIterator<BenchMessage> responses = call.get()) {
                    while (!Thread.currentThread().isInterrupted() && responses.hasNext()) {
                      responses.next();
                      received.increment();
                    }
                  } catch (RuntimeException e) {
                    // cancelled, or the connection closed at the end of the run
                  }
                },
                "bench-rpc-reader");
        t.setDaemon(true);
        onStop(t::interrupt);
        t.start();
      }
    };
  }
}
