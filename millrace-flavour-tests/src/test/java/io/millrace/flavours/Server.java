package io.millrace.flavours;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.transport.netty.MillraceServer;
import io.rsocket.core.RSocketServer;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;

/** A server on 127.0.0.1 answering with one responder flavour. */
interface Server extends AutoCloseable {
  String HOST = "127.0.0.1";
  Duration TIMEOUT = Duration.ofSeconds(10);
  ConnectionConfig CONFIG =
      ConnectionConfig.builder().fragmentSize(Behaviour.FRAGMENT_SIZE).build();

  int port();

  @Override
  void close();

  static Server millrace(Responder responder) throws Exception {
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress(HOST, 0)
            .config(CONFIG)
            .eventLoopThreads(1)
            .acceptor((setup, connection) -> responder)
            .bind();
    return new Server() {
      @Override
      public int port() {
        return server.port();
      }

      @Override
      public void close() {
        server.shutdownNow();
        try {
          server.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
  }

  static Server rsocketJava(Probe probe) {
    CloseableChannel channel =
        RSocketServer.create((setup, socket) -> Mono.just(new RSocketJavaEcho(probe)))
            .fragment(Behaviour.FRAGMENT_SIZE)
            .bind(TcpServerTransport.create(HOST, 0))
            .block(TIMEOUT);
    return new Server() {
      @Override
      public int port() {
        return channel.address().getPort();
      }

      @Override
      public void close() {
        channel.dispose();
        channel.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
      }
    };
  }
}
