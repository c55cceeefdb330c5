package io.millrace.rpc;

import io.millrace.core.Acceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A server on 127.0.0.1 and clients connected to it, for RPC tests of this module and of the
 * modules that use its test jar; closing stops them all.
 */
public final class RpcOverTcp implements AutoCloseable {
  private final MillraceServer server;
  private final List<MillraceClient> clients = new ArrayList<>();
  private final List<Connection> accepted;

  private RpcOverTcp(MillraceServer server, List<Connection> accepted) {
    this.server = server;
    this.accepted = accepted;
  }

  /** Serves {@code rpc} (native and routing callers). */
  public static RpcOverTcp serve(RpcServer rpc) throws InterruptedException {
    return serve(rpc::responder);
  }

  public static RpcOverTcp serve(Acceptor acceptor) throws InterruptedException {
    return serve(acceptor, ConnectionConfig.DEFAULT);
  }

  /** Serves {@code rpc} with {@code config} for the server's side of each connection. */
  public static RpcOverTcp serve(RpcServer rpc, ConnectionConfig config)
      throws InterruptedException {
    return serve(rpc::responder, config);
  }

  private static RpcOverTcp serve(Acceptor acceptor, ConnectionConfig config)
      throws InterruptedException {
    List<Connection> accepted = new CopyOnWriteArrayList<>();
    return new RpcOverTcp(
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .config(config)
            .acceptor(
                (setup, connection) -> {
                  accepted.add(connection);
                  return acceptor.accept(setup, connection);
                })
            .eventLoopThreads(1)
            .bind(),
        accepted);
  }

  public int port() {
    return server.port();
  }

  /** The server's side of each connection it has accepted, in order. */
  public List<Connection> accepted() {
    return accepted;
  }

  /** A new connection whose SETUP declares {@code metadataMimeType}. */
  public ReactiveRequester connect(String metadataMimeType) throws Exception {
    return connect(metadataMimeType, ConnectionConfig.DEFAULT);
  }

  /** The same, from {@code config} (its MIME types replaced). */
  private ReactiveRequester connect(String metadataMimeType, ConnectionConfig config)
      throws Exception {
    MillraceClient client =
        MillraceClient.builder()
            .config(
                config.toBuilder().mimeTypes(metadataMimeType, "application/x-protobuf").build())
            .build();
    clients.add(client);
    return ReactiveRequester.of(
        client.connect("127.0.0.1", server.port()).get(10, TimeUnit.SECONDS));
  }

  /** A native RPC client on a new connection. */
  public RpcClient client() throws Exception {
    return client(ConnectionConfig.DEFAULT);
  }

  /** A native RPC client on a new connection with {@code config} on the client's side. */
  public RpcClient client(ConnectionConfig config) throws Exception {
    return RpcClient.of(connect(RpcServer.METADATA_MIME_TYPE, config));
  }

  @Override
  public void close() {
    try {
      for (MillraceClient c : clients) {
        c.shutdownNow();
        c.awaitTermination(10, TimeUnit.SECONDS);
      }
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
