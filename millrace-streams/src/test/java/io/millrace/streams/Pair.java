package io.millrace.streams;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.util.concurrent.TimeUnit;

/** A server with {@code responder} and one client connection to it, over TCP on 127.0.0.1. */
final class Pair implements AutoCloseable {
  final MillraceServer server;
  final MillraceClient client;
  final Connection connection;

  Pair(Responder responder) throws Exception {
    this(responder, Responder.REJECT_ALL, ConnectionConfig.DEFAULT);
  }

  Pair(Responder responder, Responder clientResponder, ConnectionConfig config) throws Exception {
    server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .config(config)
            .acceptor((setup, connection) -> responder)
            .eventLoopThreads(1)
            .bind();
    client = MillraceClient.builder().config(config).responder(clientResponder).build();
    connection = client.connect("127.0.0.1", server.port()).get(10, TimeUnit.SECONDS);
  }

  ReactiveRequester requester() {
    return ReactiveRequester.of(connection);
  }

  @Override
  public void close() {
    client.shutdownNow();
    server.shutdownNow();
    try {
      client.awaitTermination(10, TimeUnit.SECONDS);
      server.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
