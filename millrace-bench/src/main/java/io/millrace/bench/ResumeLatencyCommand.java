package io.millrace.bench;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.Resumption;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.testing.ChaosProxy;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code millrace bench resume-latency}: how long a resumable client takes from a broken connection
 * to a resumed session, on loopback. A server with resumption, a proxy in front of it that resets
 * the connection, and a client running a request-stream through it, all in this JVM; each reset is
 * timed from the reset to the client's {@code onResumed} (noticing the reset, reconnecting, RESUME,
 * RESUME_OK, replay).
 */
@Command(
    name = "resume-latency",
    mixinStandardHelpOptions = true,
    description = "Time from a reset connection to a resumed session, loopback, in-process.")
final class ResumeLatencyCommand implements Callable<Integer> {
  @Option(names = "--disconnects", defaultValue = "300", description = "Resets to time.")
  int disconnects;

  @Option(names = "--warmup", defaultValue = "50", description = "Resets before timing.")
  int warmup;

  @Override
  public Integer call() throws Exception {
    ConnectionConfig config = ConnectionConfig.builder().resumption(Resumption.defaults()).build();
    ByteBuf item = Unpooled.unreleasableBuffer(Unpooled.directBuffer(64).writeZero(64));
    Responder endless =
        new Responder() {
          @Override
          public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
            StreamListener pump =
                new StreamListener() {
                  @Override
                  public void onReady(Stream s) {
                    while (s.credit() > 0 && s.isReady()) {
                      s.next(null, item.duplicate());
                    }
                  }
                };
            pump.onReady(stream);
            return pump;
          }
        };
    MillraceServer server =
        MillraceServer.builder().config(config).acceptor((setup, c) -> endless).bind();
    MillraceClient client = MillraceClient.builder().config(config).build();
    Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    try (ChaosProxy proxy = new ChaosProxy(server.address())) {
      Connection connection = client.connect("127.0.0.1", proxy.port()).get(5, TimeUnit.SECONDS);
      AtomicLong resumedAt = new AtomicLong();
      connection.addListener(
          new ConnectionListener() {
            @Override
            public void onResumed(Connection c) {
              resumedAt.set(System.nanoTime());
            }
          });
      AtomicLong received = new AtomicLong();
      connection
          .executor()
          .submit(
              () ->
                  connection.requestStream(
                      null,
                      null,
                      256,
                      new StreamListener() {
                        @Override
                        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
                          if (received.incrementAndGet() % 128 == 0) {
                            s.request(128);
                          }
                        }
                      }))
          .get(5, TimeUnit.SECONDS);
      for (int i = 0; i < warmup + disconnects; i++) {
        long before = received.get();
        awaitTrue(() -> received.get() > before + 1_000, "traffic before reset " + i);
        resumedAt.set(0);
        long start = System.nanoTime();
        proxy.reset();
        awaitTrue(() -> resumedAt.get() != 0, "resume " + i);
        if (i >= warmup) {
          histogram.recordValue(resumedAt.get() - start);
        }
      }
      System.out.printf(
          Locale.ROOT,
          "reconnect-to-resumed over %d resets (loopback, in-process, request-stream running):"
              + " p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms%n",
          histogram.getTotalCount(),
          histogram.getValueAtPercentile(50) / 1e6,
          histogram.getValueAtPercentile(90) / 1e6,
          histogram.getValueAtPercentile(99) / 1e6,
          histogram.getMaxValue() / 1e6);
    } finally {
      client.shutdownNow();
      server.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
    return 0;
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      Thread.sleep(0, 100_000);
    }
  }
}
