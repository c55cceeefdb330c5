package io.millrace.bench.scenario;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.millrace.bench.grpc.GrpcSystem;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServiceDefinition;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.EventLoops;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Servers and clients of the scenarios, one event loop each: Millrace RPC over TCP, grpc-java over
 * HTTP/2 with the harness's settings, and the JSON bodies of the REST baseline (protobuf's JSON
 * mapping of the same messages).
 */
final class Endpoints {
  private Endpoints() {}

  static AutoCloseable millraceServer(int port, ServiceDefinition service) throws Exception {
    RpcServer rpc = RpcServer.builder().service(service).build();
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", port)
            .eventLoopThreads(1)
            .acceptor(rpc::responder)
            .bind();
    return server::close;
  }

  /** An RPC client on its own connection and event loop; {@code close} ends both. */
  record RpcConnection(RpcClient rpc, Runnable close) {}

  static RpcConnection millraceClient(int port) throws Exception {
    MillraceClient client =
        MillraceClient.builder()
            .eventLoopThreads(1)
            .config(
                ConnectionConfig.builder()
                    .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
                    .build())
            .build();
    Connection connection = client.connect("127.0.0.1", port).get(10, TimeUnit.SECONDS);
    return new RpcConnection(
        RpcClient.of(ReactiveRequester.of(connection)),
        () -> {
          connection.dispose();
          client.close();
        });
  }

  /** A grpc-java server; handlers on {@code executor}, or on the event loop when it is null. */
  static AutoCloseable grpcServer(int port, ServerServiceDefinition service, Executor executor)
      throws Exception {
    EventLoopGroup group = EventLoops.newGroup(1, "grpc-server");
    Server server;
    try {
      var builder = GrpcSystem.serverBuilder(port, group).addService(service);
      if (executor == null) {
        builder.directExecutor();
      } else {
        builder.executor(executor);
      }
      server = builder.build().start();
    } catch (IOException | RuntimeException e) {
      GrpcSystem.shutdown(group);
      throw e;
    }
    return () -> {
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      GrpcSystem.shutdown(group);
    };
  }

  /** A ready grpc-java channel on its own event loop; {@code close} ends both. */
  record GrpcClient(ManagedChannel channel, Runnable close) {}

  static GrpcClient grpcClient(int port) throws Exception {
    EventLoopGroup group = EventLoops.newGroup(1, "grpc-client");
    ManagedChannel channel = GrpcSystem.channelBuilder(port, group).build();
    try {
      GrpcSystem.awaitReady(channel, 10, TimeUnit.SECONDS);
    } catch (Exception | Error e) {
      channel.shutdownNow();
      GrpcSystem.shutdown(group);
      throw e;
    }
    return new GrpcClient(
        channel,
        () -> {
          channel.shutdownNow();
          GrpcSystem.shutdown(group);
        });
  }

  // ------------------------------------------------------------------ REST/JSON

  /**
   * The JDK's HTTP server on 127.0.0.1:{@code port}, with TCP_NODELAY: without it the server's
   * separate writes of headers and body meet the client's delayed ACK, and every request-response
   * takes 40 ms (the property is read once, when the server's classes load).
   */
  static HttpServer httpServer(int port) throws IOException {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    return HttpServer.create(new InetSocketAddress("127.0.0.1", port), 4096);
  }

  /** protobuf's JSON format, in a class of its own: loading it needs protobuf-java-util. */
  private static final class Json {
    static final JsonFormat.Printer PRINT = JsonFormat.printer().omittingInsignificantWhitespace();
    static final JsonFormat.Parser PARSE = JsonFormat.parser().ignoringUnknownFields();
  }

  static String json(Message m) {
    try {
      return Json.PRINT.print(m);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static <M extends Message> M parse(String json, Message.Builder builder) {
    try {
      Json.PARSE.merge(json, builder);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("bad JSON: " + json, e);
    }
    return (M) builder.build();
  }

  /** The request's JSON body as a message of {@code builder}'s type. */
  static <M extends Message> M body(HttpExchange exchange, Message.Builder builder)
      throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), builder);
    }
  }

  static void respond(HttpExchange exchange, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
