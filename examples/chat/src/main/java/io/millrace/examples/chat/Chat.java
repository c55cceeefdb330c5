package io.millrace.examples.chat;

import io.millrace.core.ConnectionConfig;
import io.millrace.examples.chat.v1.ChatMessage;
import io.millrace.examples.chat.v1.ChatServiceFutures;
import io.millrace.examples.chat.v1.CreateRequest;
import io.millrace.examples.chat.v1.FindByIdRequest;
import io.millrace.examples.chat.v1.RemoveRequest;
import io.millrace.examples.chat.v1.UpdateRequest;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.StatusException;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.io.PrintStream;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The chat example: {@code server PORT} serves ChatService until stopped; {@code client PORT}
 * creates, updates, finds and removes a message and prints what it got.
 */
public final class Chat {
  private Chat() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !(args[0].equals("server") || args[0].equals("client"))) {
      System.err.println("usage: chat server PORT | chat client PORT");
      System.exit(2);
    }
    int port = Integer.parseInt(args[1]);
    if (args[0].equals("server")) {
      MillraceServer server = serve(port, handlers());
      System.out.println("chat server on 127.0.0.1:" + server.port());
      server.awaitTermination();
    } else {
      try (MillraceClient client = client()) {
        run(connect(client, port), System.out);
      }
    }
  }

  /** Blocking handlers on virtual threads where the JDK has them, else a thread pool. */
  static ExecutorService handlers() {
    return io.millrace.rpc.Blocking.newHandlerExecutor("chat-handler");
  }

  static MillraceServer serve(int port, ExecutorService handlers) throws InterruptedException {
    RpcServer rpc =
        RpcServer.builder().service(ChatServiceFutures.bind(new ChatStore(), handlers)).build();
    return MillraceServer.builder().bindAddress("127.0.0.1", port).acceptor(rpc::responder).bind();
  }

  static MillraceClient client() {
    return MillraceClient.builder()
        .config(
            ConnectionConfig.builder()
                .mimeTypes(RpcServer.METADATA_MIME_TYPE, "application/x-protobuf")
                .build())
        .build();
  }

  static ChatServiceFutures.Client connect(MillraceClient client, int port) throws Exception {
    return new ChatServiceFutures.Client(
        RpcClient.of(
            ReactiveRequester.of(client.connect("127.0.0.1", port).get(10, TimeUnit.SECONDS))));
  }

  /** The four operations, one after another, as a synchronous CRUD client makes them. */
  static void run(ChatServiceFutures.Client chat, PrintStream out) {
    ChatMessage created = chat.create(CreateRequest.newBuilder().setText("hello").build());
    out.println("created " + created.getId() + ": " + created.getText());
    ChatMessage updated =
        chat.update(
            UpdateRequest.newBuilder().setId(created.getId()).setText("hello, world").build());
    out.println("updated " + updated.getId() + ": " + updated.getText());
    ChatMessage found = chat.findById(FindByIdRequest.newBuilder().setId(created.getId()).build());
    out.println("found " + found.getId() + ": " + found.getText());
    boolean removed =
        chat.remove(RemoveRequest.newBuilder().setId(created.getId()).build()).getRemoved();
    out.println("removed " + created.getId() + ": " + removed);
    try {
      chat.findById(FindByIdRequest.newBuilder().setId(created.getId()).build());
    } catch (StatusException e) {
      out.println("then " + e.status());
    }
  }
}
