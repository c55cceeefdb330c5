package io.millrace.cli;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.LeaseIssuer;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.grpc.GrpcEndpoint;
import io.millrace.rpc.RpcServer;
import io.millrace.transport.netty.MillraceServer;
import io.millrace.transport.netty.ServerTls;
import io.millrace.transport.netty.TransportUri;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code millrace echo-server}: serves {@link EchoResponder} over TCP until stopped. SIGTERM and
 * SIGINT shut it down gracefully (see {@link MillraceServer#shutdown()}): every connection gets
 * ERROR[CONNECTION_CLOSE], requests already received are answered, later ones get ERROR[REJECTED],
 * and after at most {@code --drain-timeout} seconds what is left is closed; then it exits 0.
 */
@Command(
    name = "echo-server",
    mixinStandardHelpOptions = true,
    description = {
      "Serves the echo semantics over TCP, for any SETUP MIME types:",
      "  request-response echoes data and metadata; data 'error:MSG' gets APPLICATION_ERROR MSG;",
      "  request-stream sends N payloads \"0\"..\"N-1\" (N = the data) with the request's metadata;",
      "  request-channel echoes every payload and completes when the requester does;",
      "  fire-and-forget and metadata push are ignored.",
      "On the same port, RPC: millrace.echo.v1.EchoService for connections whose metadata MIME",
      "  type is application/x.millrace.rpc.v1, and for routing callers (composite metadata with",
      "  a route such as millrace.echo.v1.EchoService.Echo); try: millrace call --rpc ...",
      "With --grpc-port, EchoService is also served to gRPC clients (HTTP/2 without TLS), with",
      "  the health and reflection services: grpcurl and ghz work without the .proto file.",
      "SIGTERM or SIGINT drains every connection (at most --drain-timeout s) and exits 0."
    })
final class EchoServerCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin TransportOptions transport;

  @Option(
      names = "--listen",
      paramLabel = "URI",
      description =
          "Listen on URI, repeatable: tcp://H:P, tls://H:P, ws://H:P/PATH, wss://H:P/PATH,"
              + " unix:///path. A tcp, tls or unix port also takes WebSocket upgrades. Default:"
              + " tcp://--host:--port.")
  List<String> listen;

  @Option(names = "--event-loops", defaultValue = "1", description = "Event loop threads.")
  int eventLoops;

  @Option(
      names = "--lease-requests",
      defaultValue = "0",
      description = "Support leases: grant this many requests per --lease-ttl (0: no leases).")
  int leaseRequests;

  @Option(names = "--lease-ttl", defaultValue = "1000", description = "Lease window in ms.")
  int leaseTtl;

  @Option(
      names = "--drain-timeout",
      defaultValue = "10",
      description =
          "Seconds a shutdown waits for connections to finish before closing them"
              + " (default: ${DEFAULT-VALUE}).")
  long drainTimeoutSeconds;

  @Option(
      names = "--grpc-port",
      defaultValue = "-1",
      description =
          "Also serve EchoService to gRPC clients on this port (h2c, on --host; 0: a free port).")
  int grpcPort;

  @Option(
      names = "--grpc-shared",
      description =
          "Also serve EchoService to gRPC clients on the RSocket ports (tcp, tls, unix listeners;"
              + " ALPN h2 under TLS), with the health and reflection services.")
  boolean grpcShared;

  @Override
  public Integer call() throws Exception {
    ConnectionConfig.Builder config =
        transport.config().drainTimeout(Duration.ofSeconds(drainTimeoutSeconds));
    if (leaseRequests > 0) {
      config.leaseIssuer(LeaseIssuer.fixed(leaseTtl, leaseRequests));
    }
    RpcServer rpc = echoRpc();
    MillraceServer.Builder builder =
        MillraceServer.builder()
            .config(config.build())
            .eventLoopThreads(eventLoops)
            .ioKind(transport.ioKind())
            .acceptor(acceptor(rpc));
    if (listen == null || listen.isEmpty()) {
      builder.bindAddress(transport.host, transport.port);
    } else {
      if (grpcPort < 0) { // else --host is where the gRPC port listens
        TransportOptions.refuseBeside(spec, "--listen", "--host", "--port");
      } else {
        TransportOptions.refuseBeside(spec, "--listen", "--port");
      }
      for (String uri : listen) {
        builder.listen(uri);
      }
    }
    ServerTls tls = transport.serverTls();
    if (tls != null) {
      builder.tls(tls);
    }
    if (grpcShared && grpcPort >= 0) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "give --grpc-port or --grpc-shared, not both");
    }
    GrpcEndpoint grpc =
        grpcShared
            ? GrpcEndpoint.builder(rpc).sharedPorts().start()
            : grpcPort < 0
                ? null
                : GrpcEndpoint.builder(rpc)
                    .address(new InetSocketAddress(transport.host, grpcPort))
                    .start();
    if (grpcShared) {
      builder.http2Handoff(grpc.handoff());
    }
    MillraceServer server = builder.bind();
    PrintWriter out = spec.commandLine().getOut();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> shutDown(server, grpc, out), "millrace-shutdown"));
    for (TransportUri uri : server.listeners()) {
      out.println(
          "millrace echo-server listening on "
              + uri
              + (uri.scheme() == TransportUri.Scheme.LOCAL ? "" : " (" + transport.ioKind() + ")")
              + (transport.resume
                  ? ", resumption on (sessions kept " + transport.resumeSessionTtlSeconds + " s)"
                  : ""));
    }
    if (grpcShared) {
      out.println(
          "millrace echo-server: gRPC on the ports above, with grpc.health.v1.Health and server"
              + " reflection");
    } else if (grpc != null) {
      out.println(
          "millrace echo-server: gRPC (h2c) on "
              + transport.host
              + ":"
              + grpc.port()
              + ", with grpc.health.v1.Health and server reflection");
    }
    out.flush();
    server.awaitTermination();
    return 0;
  }

  /** The raw echo responder, with EchoService over RPC on the same connections. */
  static Acceptor acceptor(RpcServer rpc) {
    EchoResponder responder = new EchoResponder();
    return (setup, connection) -> rpc.responder(setup, connection, responder);
  }

  /** EchoService, as RPC. */
  static RpcServer echoRpc() {
    return RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build();
  }

  /**
   * Runs in the JVM's shutdown hook (SIGTERM, SIGINT): drains, then halts with status 0, since a
   * JVM ended by a signal would otherwise exit with 128 + the signal's number. The halt skips other
   * shutdown hooks; the echo server registers none (its logging writes straight through).
   */
  private void shutDown(MillraceServer server, GrpcEndpoint grpc, PrintWriter out) {
    out.println(
        "millrace echo-server: shutting down, draining "
            + server.connectionCount()
            + " connection(s) for at most "
            + drainTimeoutSeconds
            + " s");
    out.flush();
    server.shutdown();
    Thread grpcDrain = null;
    if (grpc != null) {
      grpcDrain =
          new Thread(() -> grpc.close(Duration.ofSeconds(drainTimeoutSeconds)), "grpc-drain");
      grpcDrain.start();
    }
    boolean drained = false;
    try {
      drained = server.awaitTermination(drainTimeoutSeconds * 1000 + 2000, TimeUnit.MILLISECONDS);
      if (!drained) {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
      if (grpcDrain != null) {
        grpcDrain.join(drainTimeoutSeconds * 1000 + 7000);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
    }
    out.println("millrace echo-server: stopped" + (drained ? "" : " (forced after the timeout)"));
    out.flush();
    Runtime.getRuntime().halt(0);
  }
}
