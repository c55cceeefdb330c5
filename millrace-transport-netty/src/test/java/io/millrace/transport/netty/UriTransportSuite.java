package io.millrace.transport.netty;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.frame.FrameHeader;
import io.millrace.testing.TestCertificates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The transport suite through {@link MillraceServer} and {@link MillraceClient} on one listener
 * URI; each transport is a small subclass naming its URI, I/O kind and TLS.
 */
abstract class UriTransportSuite extends TransportSuite {

  /** The URI the server listens on (port 0 where there is a port). */
  protected abstract String listenUri();

  protected IoKind ioKind() {
    return IoKind.preferred();
  }

  protected TlsProvider tlsProvider() {
    return TlsProvider.AUTO;
  }

  private TransportUri.Scheme scheme() {
    return TransportUri.parse(listenUri()).scheme();
  }

  @Override
  protected boolean refusalIsAnError() {
    return !scheme().secure() && !scheme().webSocket();
  }

  ServerTls serverTls() {
    try {
      return ServerTls.builder(
              TestCertificates.path("server.pem"), TestCertificates.path("server.key"))
          .provider(tlsProvider())
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  ClientTls clientTls() {
    try {
      return ClientTls.builder()
          .trust(TestCertificates.path("ca.pem"))
          .provider(tlsProvider())
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private final class Server implements ServerHandle {
    final MillraceServer server;
    final MillraceClient client;

    Server(MillraceServer server) {
      this.server = server;
      this.client = newClient(ConnectionConfig.DEFAULT);
    }

    TransportUri uri() {
      return server.listeners().get(0);
    }

    @Override
    public void shutdown() {
      server.shutdown();
    }

    @Override
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
      return server.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
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

  private MillraceClient newClient(ConnectionConfig config) {
    MillraceClient.Builder builder = MillraceClient.builder().config(config).ioKind(ioKind());
    if (scheme().secure()) {
      builder.tls(clientTls());
    }
    return builder.build();
  }

  @Override
  protected ServerHandle startServer(ServerOptions options) throws Exception {
    MillraceServer.Builder builder =
        MillraceServer.builder()
            .listen(listenUri())
            .ioKind(ioKind())
            .config(options.config)
            .allocator(options.allocator)
            .maxConnections(options.maxConnections);
    if (options.eventLoopThreads > 0) {
      builder.eventLoopThreads(options.eventLoopThreads);
    }
    if (scheme().secure()) {
      builder.tls(serverTls());
    }
    if (options.asyncAcceptor != null) {
      builder.asyncAcceptor(options.asyncAcceptor);
    } else {
      builder.acceptor(options.acceptor);
    }
    return new Server(builder.bind());
  }

  @Override
  protected Connection connect(ServerHandle server, ConnectionConfig config) throws Exception {
    Server s = (Server) server;
    if (config != ConnectionConfig.DEFAULT) {
      MillraceClient configured = newClient(config);
      Connection connection = configured.connect(s.uri(), null, null).get(5, TimeUnit.SECONDS);
      connection.onClose().whenComplete((r, f) -> new Thread(configured::shutdownNow).start());
      return connection;
    }
    return s.client.connect(s.uri(), null, null).get(5, TimeUnit.SECONDS);
  }

  @Override
  protected RawPeer openRaw(ServerHandle server) throws Exception {
    if (scheme() == TransportUri.Scheme.LOCAL) {
      return InJvmRawPeer.open(((Server) server).uri().host());
    }
    return NettyRawPeer.open(
        ((Server) server).uri(), ioKind(), scheme().secure() ? clientTls() : null);
  }

  @Override
  protected void sendOversizedFrameHeader(RawPeer peer, int length) throws Exception {
    if (peer instanceof InJvmRawPeer) {
      ((InJvmRawPeer) peer).sendFrameOfLength(length);
      return;
    }
    if (scheme().webSocket()) {
      // A masked binary message claiming `length` bytes (64-bit length form), no payload yet.
      peer.sendRaw(
          new byte[] {
            (byte) 0x82,
            (byte) 0xFF,
            0,
            0,
            0,
            0,
            (byte) (length >>> 24),
            (byte) (length >>> 16),
            (byte) (length >>> 8),
            (byte) length,
            1,
            2,
            3,
            4
          });
      return;
    }
    peer.sendRaw(
        new byte[] {
          (byte) (length >>> 16),
          (byte) (length >>> 8),
          (byte) length,
          0,
          0,
          0,
          1,
          (byte) (0x0A << 2 | FrameHeader.FLAG_NEXT >>> 8),
          (byte) FrameHeader.FLAG_NEXT
        });
  }

  private static final java.util.concurrent.atomic.AtomicInteger NAMES =
      new java.util.concurrent.atomic.AtomicInteger();

  /** A fresh socket file path, short enough for the 108-byte limit; the server deletes it. */
  static String socketPath() {
    return java.nio.file.Path.of(
            System.getProperty("java.io.tmpdir"),
            "mr-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet() + ".sock")
        .toString();
  }

  /** A fresh in-JVM name. */
  static String localName() {
    return "suite-" + NAMES.incrementAndGet();
  }
}
