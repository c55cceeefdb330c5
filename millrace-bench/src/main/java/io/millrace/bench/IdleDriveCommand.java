package io.millrace.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of the idle-connections scenario. Makes one probe connection first (so both
 * processes have warmed up their allocators before the baseline), prints {@code WARMED}, then
 * answers commands on its standard input: {@code OPEN} (opens {@code --connections}, prints {@code
 * OPENED open millis}), {@code PROBE} (a fresh connection and one request-response: {@code PROBE
 * micros}), {@code COUNT} ({@code COUNT open}). Closes everything when its input ends.
 */
@Command(name = "idle-drive", hidden = true)
final class IdleDriveCommand implements Callable<Integer> {
  /** Source ports one loopback address offers (net.ipv4.ip_local_port_range), with a margin. */
  static final int CONNECTIONS_PER_SOURCE_ADDRESS = 25_000;

  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--connections", required = true)
  int connections;

  @Option(names = "--keepalive", defaultValue = "30")
  int keepAliveSeconds;

  @Override
  public Integer call() throws Exception {
    BenchSystem bench = Systems.byName(system);
    // Beyond one address's source ports, connections come from 127.0.0.2, 127.0.0.3, ...
    boolean spread = connections > CONNECTIONS_PER_SOURCE_ADDRESS;
    IdleConnections warm = bench.openIdle(port, 1, keepAliveSeconds, i -> null);
    IdleConnections idle = null;
    try {
      emit("PROBE " + warm.probeMicros());
      emit("WARMED");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String command;
      while ((command = in.readLine()) != null) {
        switch (command) {
          case "OPEN":
            long start = System.nanoTime();
            idle =
                bench.openIdle(
                    port,
                    connections,
                    keepAliveSeconds,
                    i ->
                        spread
                            ? new InetSocketAddress(
                                "127.0.0." + (2 + i / CONNECTIONS_PER_SOURCE_ADDRESS), 0)
                            : null);
            emit("OPENED " + idle.open() + " " + (System.nanoTime() - start) / 1_000_000);
            break;
          case "PROBE":
            emit("PROBE " + warm.probeMicros());
            break;
          case "COUNT":
            emit("COUNT " + (idle == null ? 0 : idle.open()));
            break;
          default:
            emit("UNKNOWN " + command);
        }
      }
    } finally {
      if (idle != null) {
        idle.close();
      }
      warm.close();
    }
    return 0;
  }

  private static void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
