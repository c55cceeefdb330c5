package io.millrace.bench.scenario;

import com.google.protobuf.ByteString;
import com.sun.net.httpserver.HttpServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceFutures;
import io.millrace.bench.v1.BenchServiceRpc;
import io.millrace.rpc.Blocking;
import io.millrace.rpc.MessageIterator;
import io.millrace.rpc.ResponseSink;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The small-heap scenario's systems: bench.proto's Echo with a handler that blocks for a simulated
 * delay before answering with a message of the run's size. Millrace runs it in the blocking flavour
 * on virtual threads (a thread pool before JDK 21); grpc-java on its default executor (a cached
 * thread pool), the REST baseline on a cached thread pool behind the JDK's HTTP server. The callers
 * are asynchronous: each of a run's clients is one call at a time, the next issued when the last
 * answered, all on one connection (HTTP/1.1: the JDK client opens one connection per call in
 * flight).
 */
final class UnarySystems {
  static final List<String> NAMES = List.of("millrace", "grpc-java", "rest");

  private UnarySystems() {}

  /** Issues calls; each ends in exactly one of {@code done} or {@code failed}. */
  interface Caller extends AutoCloseable {
    void call(Runnable done, Consumer<Throwable> failed);

    @Override
    void close();
  }

  static BenchMessage message(int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) i;
    }
    return BenchMessage.newBuilder().setPayload(ByteString.copyFrom(bytes)).build();
  }

  /** Blocks the calling thread for {@code nanos} (parks: a virtual thread unmounts). */
  static void work(long nanos) {
    if (nanos <= 0) {
      return;
    }
    long end = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = end - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  static AutoCloseable serve(String system, int port, long delayNanos, int size) throws Exception {
    BenchMessage reply = message(size);
    return switch (system) {
      case "millrace" -> serveMillrace(port, delayNanos, reply);
      case "grpc-java" ->
          Endpoints.grpcServer(
              port, grpcService(delayNanos, reply), Executors.newCachedThreadPool());
      case "rest" -> serveRest(port, delayNanos, reply);
      default -> throw new IllegalArgumentException("unknown system " + system + ": " + NAMES);
    };
  }

  static Caller connect(String system, int port, int size) throws Exception {
    BenchMessage request = message(size);
    return switch (system) {
      case "millrace" -> millraceCaller(port, request);
      case "grpc-java" -> grpcCaller(port, request);
      case "rest" -> restCaller(port, request);
      default -> throw new IllegalArgumentException("unknown system " + system + ": " + NAMES);
    };
  }

  // ------------------------------------------------------------------ Millrace

  private static AutoCloseable serveMillrace(int port, long delayNanos, BenchMessage reply)
      throws Exception {
    ExecutorService handlers = Blocking.newHandlerExecutor("bench-handler");
    AutoCloseable server =
        Endpoints.millraceServer(
            port,
            BenchServiceFutures.bind(
                new BenchServiceFutures.Service() {
                  @Override
                  public BenchMessage echo(BenchMessage request, ServerContext context) {
                    work(delayNanos);
                    return reply;
                  }

                  @Override
                  public void stream(
                      BenchMessage request,
                      ServerContext context,
                      ResponseSink<BenchMessage> responses) {
                    throw Status.UNIMPLEMENTED.asException();
                  }

                  @Override
                  public void channel(
                      MessageIterator<BenchMessage> requests,
                      ServerContext context,
                      ResponseSink<BenchMessage> responses) {
                    throw Status.UNIMPLEMENTED.asException();
                  }

                  @Override
                  public void send(BenchMessage request, ServerContext context) {}
                },
                handlers));
    return () -> {
      server.close();
      handlers.shutdownNow();
    };
  }

  private static Caller millraceCaller(int port, BenchMessage request) throws Exception {
    Endpoints.RpcConnection client = Endpoints.millraceClient(port);
    BenchServiceFutures.Client bench = new BenchServiceFutures.Client(client.rpc());
    return new Caller() {
      @Override
      public void call(Runnable done, Consumer<Throwable> failed) {
        bench
            .echoAsync(request)
            .whenComplete(
                (reply, error) -> {
                  if (error != null) {
                    failed.accept(error);
                  } else {
                    done.run();
                  }
                });
      }

      @Override
      public void close() {
        client.close().run();
      }
    };
  }

  // ------------------------------------------------------------------ grpc-java

  /** grpc-java's descriptor, in a class of its own: loading it needs grpc-java's jars. */
  private static final class Grpc {
    static final MethodDescriptor<BenchMessage, BenchMessage> ECHO =
        GrpcAdapters.method(
            BenchServiceRpc.ECHO,
            BenchMessage.getDefaultInstance(),
            BenchMessage.getDefaultInstance());
  }

  private static ServerServiceDefinition grpcService(long delayNanos, BenchMessage reply) {
    return ServerServiceDefinition.builder(BenchServiceRpc.SERVICE_NAME)
        .addMethod(
            Grpc.ECHO,
            ServerCalls.asyncUnaryCall(
                GrpcAdapters.<BenchMessage, BenchMessage>unary(
                    (request, context) -> {
                      work(delayNanos);
                      return reply;
                    })))
        .build();
  }

  private static Caller grpcCaller(int port, BenchMessage request) throws Exception {
    Endpoints.GrpcClient client = Endpoints.grpcClient(port);
    ManagedChannel channel = client.channel();
    return new Caller() {
      @Override
      public void call(Runnable done, Consumer<Throwable> failed) {
        ClientCalls.asyncUnaryCall(
            channel.newCall(Grpc.ECHO, CallOptions.DEFAULT),
            request,
            new StreamObserver<BenchMessage>() {
              @Override
              public void onNext(BenchMessage value) {}

              @Override
              public void onError(Throwable t) {
                failed.accept(t);
              }

              @Override
              public void onCompleted() {
                done.run();
              }
            });
      }

      @Override
      public void close() {
        client.close().run();
      }
    };
  }

  // ------------------------------------------------------------------ REST/JSON

  /** POST /echo with the request as JSON, answered with the reply as JSON. */
  private static AutoCloseable serveRest(int port, long delayNanos, BenchMessage reply)
      throws IOException {
    HttpServer server = Endpoints.httpServer(port);
    String answer = Endpoints.json(reply);
    ExecutorService handlers = Executors.newCachedThreadPool();
    server.setExecutor(handlers);
    server.createContext(
        "/echo",
        exchange -> {
          try {
            Endpoints.<BenchMessage>body(exchange, BenchMessage.newBuilder());
            work(delayNanos);
            Endpoints.respond(exchange, 200, answer);
          } finally {
            exchange.close();
          }
        });
    server.start();
    return () -> {
      server.stop(0);
      handlers.shutdownNow();
    };
  }

  private static Caller restCaller(int port, BenchMessage request) {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest post =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/echo"))
            .POST(HttpRequest.BodyPublishers.ofString(Endpoints.json(request)))
            .build();
    return new Caller() {
      @Override
      public void call(Runnable done, Consumer<Throwable> failed) {
        http.sendAsync(post, HttpResponse.BodyHandlers.ofString())
            .whenComplete(
                (response, error) -> {
                  if (error != null) {
                    failed.accept(error);
                  } else if (response.statusCode() != 200) {
                    failed.accept(new IllegalStateException("HTTP " + response.statusCode()));
                  } else {
                    try {
                      Endpoints.<BenchMessage>parse(response.body(), BenchMessage.newBuilder());
                    } catch (RuntimeException e) {
                      failed.accept(e);
                      return;
                    }
                    done.run();
                  }
                });
      }

      @Override
      public void close() {
        // HttpClient closes its connections once unreachable (close() is JDK 21+).
      }
    };
  }
}
