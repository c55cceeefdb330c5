package io.millrace.transport.netty;

import io.millrace.core.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Servers and clients a test starts, closed at its end; and an echo round trip. */
final class Servers implements AutoCloseable {
  private final List<AutoCloseable> open = new ArrayList<>();

  MillraceServer echo(MillraceServer.Builder builder) throws InterruptedException {
    MillraceServer server = builder.acceptor((setup, connection) -> TransportSuite.ECHO).bind();
    open.add(
        () -> {
          server.shutdownNow();
          server.awaitTermination(10, TimeUnit.SECONDS);
        });
    return server;
  }

  MillraceClient client(MillraceClient.Builder builder) {
    MillraceClient client = builder.build();
    open.add(
        () -> {
          client.shutdownNow();
          client.awaitTermination(10, TimeUnit.SECONDS);
        });
    return client;
  }

  /** One request-response on {@code connection}: what came back. */
  static String echo(Connection connection, String text) throws Exception {
    TransportSuite.Collector collector = new TransportSuite.Collector(0);
    connection.requestResponse(null, TransportSuite.utf8(text), collector);
    String items = collector.done.get(5, TimeUnit.SECONDS);
    return items.substring(0, items.length() - 1); // without the collector's trailing comma
  }

  @Override
  public void close() {
    try {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    } finally {
      open.clear();
    }
  }
}
