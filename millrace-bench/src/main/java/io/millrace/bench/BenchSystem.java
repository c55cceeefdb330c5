package io.millrace.bench;

import java.util.concurrent.atomic.LongAdder;

/**
 * A messaging system under test. Each runs its server and its client with exactly one event-loop
 * (I/O) thread, over TCP on 127.0.0.1, configured for its best honest speed (settings written in
 * docs/benchmarks.md).
 *
 * <p>Payloads are {@code payloadSize} bytes of data and no metadata, at the "core" level: raw
 * bytes, no serialization framework.
 */
public interface BenchSystem {

  /** The name used on the command line and in results: millrace, grpc-java, rsocket-java. */
  String name();

  /**
   * Starts a server on 127.0.0.1:{@code port} serving every interaction:
   *
   * <ul>
   *   <li>request-response: answers each request with a payload of {@code payloadSize} bytes;
   *   <li>fire-and-forget: consumes each message;
   *   <li>request-stream: sends an endless stream of {@code payloadSize}-byte payloads, honouring
   *       the client's flow control;
   *   <li>request-channel: echoes every payload it receives, honouring flow control both ways.
   * </ul>
   *
   * Every message the server handles (request answered, fire-and-forget received, stream item sent,
   * channel item echoed) increments {@code handled}.
   */
  BenchServer startServer(int port, int payloadSize, LongAdder handled) throws Exception;

  /**
   * Whether the system runs over {@code transport} (tcp, tls, ws, wss, unix; the harness skips the
   * others). Only Millrace's core and flavour systems run over more than TCP.
   */
  default boolean supportsTransport(String transport) {
    return "tcp".equals(transport);
  }

  /** Whether the system has {@code interaction} at all (the harness skips those it has not). */
  default boolean supports(Interaction interaction) {
    return true;
  }

  /** Connects a client to 127.0.0.1:{@code port} that sends payloads of {@code payloadSize}. */
  BenchClient connect(int port, int payloadSize) throws Exception;

  /**
   * A server for the idle-connections scenario: as {@link #startServer} with 8-byte answers, and
   * every client keepalive at 30 s allowed (grpc-java's servers refuse pings more often than every
   * 5 minutes by default).
   */
  default BenchServer startIdleServer(int port) throws Exception {
    return startServer(port, 8, new LongAdder());
  }

  /**
   * Opens {@code count} connections to 127.0.0.1:{@code port} that do nothing but keep themselves
   * alive every {@code keepAliveSeconds} (RSocket KEEPALIVE, HTTP/2 PING), connection {@code i}
   * from {@code localAddress.apply(i)} (null: any). Returns once all are established.
   */
  IdleConnections openIdle(
      int port,
      int count,
      int keepAliveSeconds,
      java.util.function.IntFunction<java.net.InetSocketAddress> localAddress)
      throws Exception;
}
