package io.millrace.bench.scenario;

import com.google.protobuf.Message;
import com.sun.net.httpserver.HttpServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.millrace.examples.chat.ChatStore;
import io.millrace.examples.chat.v1.ChatMessage;
import io.millrace.examples.chat.v1.ChatServiceFutures;
import io.millrace.examples.chat.v1.ChatServiceRpc;
import io.millrace.examples.chat.v1.CreateRequest;
import io.millrace.examples.chat.v1.FindByIdRequest;
import io.millrace.examples.chat.v1.RemoveReply;
import io.millrace.examples.chat.v1.RemoveRequest;
import io.millrace.examples.chat.v1.UpdateRequest;
import io.millrace.rpc.StatusException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.function.Function;

/**
 * The CRUD scenario's systems: the chat example's {@link ChatStore} served over Millrace RPC, over
 * grpc-java and over REST/JSON, and a synchronous client for each. The store never blocks, so every
 * server runs its handlers where the request arrives: Millrace and grpc-java on their single event
 * loop (a direct executor), the JDK's HTTP server on its dispatcher thread.
 */
final class CrudSystems {
  static final List<String> NAMES = List.of("millrace", "grpc-java", "rest");

  private CrudSystems() {}

  /** The four calls, each waiting for its answer; a failure is thrown. */
  interface ChatCalls extends AutoCloseable {
    ChatMessage create(CreateRequest request);

    ChatMessage update(UpdateRequest request);

    ChatMessage findById(FindByIdRequest request);

    RemoveReply remove(RemoveRequest request);

    @Override
    void close();
  }

  static AutoCloseable serve(String system, int port) throws Exception {
    ChatStore store = new ChatStore();
    return switch (system) {
      case "millrace" ->
          Endpoints.millraceServer(port, ChatServiceFutures.bind(store, Runnable::run));
      case "grpc-java" -> Endpoints.grpcServer(port, grpcService(store), null);
      case "rest" -> serveRest(store, port);
      default -> throw new IllegalArgumentException("unknown system " + system + ": " + NAMES);
    };
  }

  static ChatCalls connect(String system, int port) throws Exception {
    return switch (system) {
      case "millrace" -> millraceCalls(port);
      case "grpc-java" -> grpcCalls(port);
      case "rest" -> restCalls(port);
      default -> throw new IllegalArgumentException("unknown system " + system + ": " + NAMES);
    };
  }

  // ------------------------------------------------------------------ Millrace

  private static ChatCalls millraceCalls(int port) throws Exception {
    Endpoints.RpcConnection client = Endpoints.millraceClient(port);
    ChatServiceFutures.Client chat = new ChatServiceFutures.Client(client.rpc());
    return new ChatCalls() {
      @Override
      public ChatMessage create(CreateRequest request) {
        return chat.create(request);
      }

      @Override
      public ChatMessage update(UpdateRequest request) {
        return chat.update(request);
      }

      @Override
      public ChatMessage findById(FindByIdRequest request) {
        return chat.findById(request);
      }

      @Override
      public RemoveReply remove(RemoveRequest request) {
        return chat.remove(request);
      }

      @Override
      public void close() {
        client.close().run();
      }
    };
  }

  // ------------------------------------------------------------------ grpc-java

  /** grpc-java's descriptors, in a class of their own: loading them needs grpc-java's jars. */
  private static final class Grpc {
    static final MethodDescriptor<CreateRequest, ChatMessage> CREATE =
        GrpcAdapters.method(
            ChatServiceRpc.CREATE,
            CreateRequest.getDefaultInstance(),
            ChatMessage.getDefaultInstance());
    static final MethodDescriptor<UpdateRequest, ChatMessage> UPDATE =
        GrpcAdapters.method(
            ChatServiceRpc.UPDATE,
            UpdateRequest.getDefaultInstance(),
            ChatMessage.getDefaultInstance());
    static final MethodDescriptor<FindByIdRequest, ChatMessage> FIND_BY_ID =
        GrpcAdapters.method(
            ChatServiceRpc.FIND_BY_ID,
            FindByIdRequest.getDefaultInstance(),
            ChatMessage.getDefaultInstance());
    static final MethodDescriptor<RemoveRequest, RemoveReply> REMOVE =
        GrpcAdapters.method(
            ChatServiceRpc.REMOVE,
            RemoveRequest.getDefaultInstance(),
            RemoveReply.getDefaultInstance());
  }

  private static ServerServiceDefinition grpcService(ChatStore store) {
    return ServerServiceDefinition.builder(ChatServiceRpc.SERVICE_NAME)
        .addMethod(Grpc.CREATE, ServerCalls.asyncUnaryCall(GrpcAdapters.unary(store::create)))
        .addMethod(Grpc.UPDATE, ServerCalls.asyncUnaryCall(GrpcAdapters.unary(store::update)))
        .addMethod(Grpc.FIND_BY_ID, ServerCalls.asyncUnaryCall(GrpcAdapters.unary(store::findById)))
        .addMethod(Grpc.REMOVE, ServerCalls.asyncUnaryCall(GrpcAdapters.unary(store::remove)))
        .build();
  }

  private static ChatCalls grpcCalls(int port) throws Exception {
    Endpoints.GrpcClient client = Endpoints.grpcClient(port);
    ManagedChannel channel = client.channel();
    return new ChatCalls() {
      private <Req, Resp> Resp call(MethodDescriptor<Req, Resp> method, Req request) {
        return ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT, request);
      }

      @Override
      public ChatMessage create(CreateRequest request) {
        return call(Grpc.CREATE, request);
      }

      @Override
      public ChatMessage update(UpdateRequest request) {
        return call(Grpc.UPDATE, request);
      }

      @Override
      public ChatMessage findById(FindByIdRequest request) {
        return call(Grpc.FIND_BY_ID, request);
      }

      @Override
      public RemoveReply remove(RemoveRequest request) {
        return call(Grpc.REMOVE, request);
      }

      @Override
      public void close() {
        client.close().run();
      }
    };
  }

  // ------------------------------------------------------------------ REST/JSON

  /**
   * The JDK's HTTP server: POST /messages creates, PUT /messages/{id} updates, GET /messages/{id}
   * finds, DELETE /messages/{id} removes; bodies are protobuf's JSON mapping of the same messages.
   * Not found is 404 with the status message.
   */
  private static AutoCloseable serveRest(ChatStore store, int port) throws IOException {
    HttpServer server = Endpoints.httpServer(port);
    server.createContext(
        "/messages",
        exchange -> {
          try {
            String path = exchange.getRequestURI().getPath();
            String id = path.length() > "/messages/".length() ? path.substring(10) : "";
            Message answer;
            try {
              answer =
                  switch (exchange.getRequestMethod()) {
                    case "POST" ->
                        store.create(Endpoints.body(exchange, CreateRequest.newBuilder()), null);
                    case "PUT" ->
                        store.update(
                            Endpoints.<UpdateRequest>body(exchange, UpdateRequest.newBuilder())
                                .toBuilder()
                                .setId(id)
                                .build(),
                            null);
                    case "GET" ->
                        store.findById(FindByIdRequest.newBuilder().setId(id).build(), null);
                    case "DELETE" ->
                        store.remove(RemoveRequest.newBuilder().setId(id).build(), null);
                    default -> null;
                  };
            } catch (StatusException e) {
              Endpoints.respond(exchange, 404, e.status().message());
              return;
            }
            if (answer == null) {
              Endpoints.respond(exchange, 405, "method not allowed");
              return;
            }
            Endpoints.respond(exchange, 200, Endpoints.json(answer));
          } finally {
            exchange.close();
          }
        });
    server.start();
    return () -> server.stop(0);
  }

  private static ChatCalls restCalls(int port) {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    String base = "http://127.0.0.1:" + port + "/messages";
    return new ChatCalls() {
      private <M extends Message> M send(
          HttpRequest.Builder request, Function<String, M> parse, String what) {
        HttpResponse<String> response;
        try {
          response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
          throw new IllegalStateException(what + " failed", e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(what + " interrupted", e);
        }
        if (response.statusCode() != 200) {
          throw new IllegalStateException(what + ": HTTP " + response.statusCode());
        }
        return parse.apply(response.body());
      }

      private HttpRequest.BodyPublisher json(Message m) {
        return HttpRequest.BodyPublishers.ofString(Endpoints.json(m));
      }

      @Override
      public ChatMessage create(CreateRequest request) {
        return send(
            HttpRequest.newBuilder(URI.create(base)).POST(json(request)),
            b -> Endpoints.parse(b, ChatMessage.newBuilder()),
            "create");
      }

      @Override
      public ChatMessage update(UpdateRequest request) {
        return send(
            HttpRequest.newBuilder(URI.create(base + "/" + request.getId()))
                .PUT(json(request.toBuilder().clearId().build())),
            b -> Endpoints.parse(b, ChatMessage.newBuilder()),
            "update");
      }

      @Override
      public ChatMessage findById(FindByIdRequest request) {
        return send(
            HttpRequest.newBuilder(URI.create(base + "/" + request.getId())).GET(),
            b -> Endpoints.parse(b, ChatMessage.newBuilder()),
            "findById");
      }

      @Override
      public RemoveReply remove(RemoveRequest request) {
        return send(
            HttpRequest.newBuilder(URI.create(base + "/" + request.getId())).DELETE(),
            b -> Endpoints.parse(b, RemoveReply.newBuilder()),
            "remove");
      }

      @Override
      public void close() {
        // HttpClient closes its connections once unreachable (close() is JDK 21+).
      }
    };
  }
}
