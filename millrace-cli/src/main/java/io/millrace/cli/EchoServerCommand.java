package io.millrace.cli;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.LeaseIssuer;
import io.millrace.transport.netty.EventLoops;
import io.millrace.transport.netty.TcpServer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code millrace echo-server}: serves {@link EchoResponder} over TCP until stopped. */
@Command(
    name = "echo-server",
    mixinStandardHelpOptions = true,
    description = {
      "Serves the echo semantics over TCP, for any SETUP MIME types:",
      "  request-response echoes data and metadata; data 'error:MSG' gets APPLICATION_ERROR MSG;",
      "  request-stream sends N payloads \"0\"..\"N-1\" (N = the data) with the request's metadata;",
      "  request-channel echoes every payload and completes when the requester does;",
      "  fire-and-forget and metadata push are ignored."
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

  @Override
  public Integer call() throws Exception {
    ConnectionConfig.Builder config = transport.config();
    if (leaseRequests > 0) {
      config.leaseIssuer(LeaseIssuer.fixed(leaseTtl, leaseRequests));
    }
    EchoResponder responder = new EchoResponder();
    TcpServer server =
        TcpServer.builder()
            .bindAddress(transport.host, transport.port)
            .config(config.build())
            .eventLoopThreads(eventLoops)
            .acceptor((setup, connection) -> responder)
            .bind();
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "millrace-shutdown"));
    java.io.PrintWriter out = spec.commandLine().getOut();
    out.println(
        "millrace echo-server listening on "
            + server.address().getHostString()
            + ":"
            + server.port()
            + (EventLoops.epoll() ? " (epoll)" : " (nio)"));
    out.flush();
    server.awaitClose();
    return 0;
  }
}
