package io.millrace.bench;

import io.millrace.bench.millrace.BenchTransport;
import java.io.InputStream;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.LongAdder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server process of one run: starts a system's server, prints {@code READY}, then once a second
 * {@code TICK <millis> <messages handled> <bytes allocated> <process CPU ns> <GC ms> <JIT ms>}
 * until its standard input closes (the harness closes it, or dies).
 */
@Command(name = "serve", hidden = true, description = "Server process of one benchmark run.")
final class ServeCommand implements Callable<Integer> {
  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--transport", defaultValue = "tcp")
  String transport;

  @Option(names = "--io", description = "Socket I/O kind: epoll, io_uring or nio.")
  String io;

  @Option(names = "--size", required = true)
  int size;

  @Override
  public Integer call() throws Exception {
    if (io != null) {
      System.setProperty("millrace.io", io); // before anything asks IoKind.preferred()
    }
    BenchTransport.use(transport);
    LongAdder handled = new LongAdder();
    BenchServer server = Systems.byName(system).startServer(port, size, handled);
    try {
      System.out.println("READY");
      System.out.flush();
      Thread ticker = Ticker.start(() -> tick(handled));
      InputStream in = System.in;
      while (in.read() >= 0) {
        // wait for the harness to close our input
      }
      ticker.interrupt();
      // A last tick at the end, so that a window ending just now has one after it.
      System.out.println(tick(handled));
      System.out.flush();
    } finally {
      server.close();
    }
    return 0;
  }

  private static String tick(LongAdder handled) {
    return Systems.tick(System.currentTimeMillis(), handled.sum());
  }
}
