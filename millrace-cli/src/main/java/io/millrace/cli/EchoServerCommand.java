package io.millrace.cli;

import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.LeaseIssuer;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcServer;
import io.millrace.transport.netty.EventLoops;
import io.millrace.transport.netty.TcpServer;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code millrace echo-server}: serves {@link EchoResponder} over TCP until stopped. SIGTERM and
 * SIGINT shut it down gracefully (see {@link TcpServer#shutdown()}): every connection gets
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
      "SIGTERM or SIGINT drains every connection (at most --drain-timeout s) and exits 0."
    })
final class EchoServerCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin TransportOptions transport;

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

  @Override
  public Integer call() throws Exception {
    ConnectionConfig.Builder config =
        transport.config().drainTimeout(Duration.ofSeconds(drainTimeoutSeconds));
    if (leaseRequests > 0) {
      config.leaseIssuer(LeaseIssuer.fixed(leaseTtl, leaseRequests));
    }
    TcpServer server =
        TcpServer.builder()
            .bindAddress(transport.host, transport.port)
            .config(config.build())
            .eventLoopThreads(eventLoops)
            .acceptor(acceptor())
            .bind();
    PrintWriter out = spec.commandLine().getOut();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> shutDown(server, out), "millrace-shutdown"));
    out.println(
        "millrace echo-server listening on "
            + server.address().getHostString()
            + ":"
            + server.port()
            + (EventLoops.epoll() ? " (epoll)" : " (nio)")
            + (transport.resume
                ? ", resumption on (sessions kept " + transport.resumeSessionTtlSeconds + " s)"
                : ""));
    out.flush();
    server.awaitTermination();
    return 0;
  }

  /** The raw echo responder, with EchoService over RPC on the same connections. */
  static Acceptor acceptor() {
    EchoResponder responder = new EchoResponder();
    RpcServer rpc =
        RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build();
    return (setup, connection) -> rpc.responder(setup, connection, responder);
  }

  /**
   * Runs in the JVM's shutdown hook (SIGTERM, SIGINT): drains, then halts with status 0, since a
   * JVM ended by a signal would otherwise exit with 128 + the signal's number. The halt skips other
   * shutdown hooks; the echo server registers none (its logging writes straight through).
   */
  private void shutDown(TcpServer server, PrintWriter out) {
    out.println(
        "millrace echo-server: shutting down, draining "
            + server.connectionCount()
            + " connection(s) for at most "
            + drainTimeoutSeconds
            + " s");
    out.flush();
    server.shutdown();
    boolean drained = false;
    try {
      drained = server.awaitTermination(drainTimeoutSeconds * 1000 + 2000, TimeUnit.MILLISECONDS);
      if (!drained) {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
    }
    out.println("millrace echo-server: stopped" + (drained ? "" : " (forced after the timeout)"));
    out.flush();
    Runtime.getRuntime().halt(0);
  }
}
