package io.millrace.bench.millrace;

import io.millrace.bench.BenchSystem;
import io.millrace.bench.Systems;
import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.internal.ConnectionEngine;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * An endless request-stream between a client and a server engine on one thread, through {@link
 * PipeTransport}s instead of sockets: the bench's own responder and consumer of each system (the
 * core, a flavour, an RPC flavour), with the same credit, but no system calls and no second core.
 * The socket bench's throughput on this virtual machine swings with the host's load, by 4x between
 * runs of one build on some days; this one measures what a payload costs both sides together in
 * Java. Its iterations spread by about 15 %, but whole forks of some systems by up to half
 * (docs/benchmarks.md, thirty-first session): compare builds over several forks.
 *
 * <p>{@code items} (an auxiliary counter, per second) is the figure: payloads received by the
 * client. {@code pump} itself is one exchange (the client's frames read by the server, then the
 * server's by the client), about a thousand payloads.
 *
 * <p>{@code java -jar millrace-bench/target/millrace-bench.jar jmh StreamPipe -p
 * system=millrace,millrace-reactor}, pinned with {@code taskset -c 1}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Djmh.executor=CUSTOM",
      "-Djmh.executor.class=io.millrace.bench.millrace.StreamPipeBenchmark$LoopThreads"
    })
public class StreamPipeBenchmark {
  @Param({
    "millrace",
    "millrace-reactor",
    "millrace-rxjava",
    "millrace-mutiny",
    "millrace-rpc",
    "millrace-rpc-rxjava",
    "millrace-rpc-mutiny"
  })
  String system;

  @Param({"8"})
  int size;

  /** Payloads received, reported per second. */
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  @State(Scope.Thread)
  public static class Items {
    public long items;
  }

  private final LongAdder received = new LongAdder();
  private final LongAdder handled = new LongAdder();
  private ByteBuf request;
  private ByteBuf response;
  private PipeTransport toServer;
  private PipeTransport toClient;
  private ConnectionEngine server;
  private ConnectionEngine client;
  private FlavourSystem.Calls calls;
  private long counted;

  @Setup(Level.Trial)
  public void setUp() {
    request = MillraceSystem.payload(size);
    response = MillraceSystem.payload(size);
    try {
      connect();
    } catch (RuntimeException | Error e) {
      try {
        tearDown(); // releases what was made; the setup's failure is the one reported
      } catch (RuntimeException | Error t) {
        e.addSuppressed(t);
      }
      throw e;
    }
    counted = received.sum();
  }

  private void connect() {
    BenchSystem bench = Systems.byName(system);
    Acceptor acceptor;
    ConnectionConfig clientConfig;
    if (bench instanceof FlavourSystem flavour) {
      acceptor = flavour.acceptor(response, handled);
      clientConfig = flavour.clientConfig();
    } else if (bench instanceof MillraceSystem) {
      Responder core = MillraceSystem.responder(response, handled);
      acceptor = (setup, connection) -> core;
      clientConfig = ConnectionConfig.DEFAULT;
    } else {
      throw new IllegalArgumentException(system + " is not a Millrace system");
    }
    toServer = new PipeTransport();
    toClient = new PipeTransport();
    server = ConnectionEngine.server(toClient, ConnectionConfig.DEFAULT, acceptor, null);
    server.start(null, null);
    client = ConnectionEngine.client(toServer, clientConfig, null);
    client.start(null, null);
    if (bench instanceof FlavourSystem flavour) {
      calls = flavour.calls(client, request);
      calls.startStream(received);
    } else {
      client
          .executor()
          .execute(
              () ->
                  client.requestStream(
                      null,
                      request,
                      MillraceSystem.INITIAL,
                      new MillraceSystem.BatchingConsumer(received)));
    }
    for (int i = 0; i < 100 && received.sum() == 0; i++) {
      exchange();
    }
    if (received.sum() == 0) {
      throw new IllegalStateException(system + ": no payload arrived");
    }
  }

  private void exchange() {
    toServer.deliverTo(server);
    toClient.deliverTo(client);
  }

  /**
   * JMH's threads for this benchmark: Netty's kind ({@code FastThreadLocalThread}), as the event
   * loops are, so that the engines' and the RPC layer's thread-locals take the same path they take
   * there (on another thread, the RPC layer's coders are not reused at all).
   */
  public static final class LoopThreads extends ThreadPoolExecutor {
    public LoopThreads(int maxThreads, String prefix) {
      super(
          maxThreads,
          maxThreads,
          1,
          TimeUnit.MINUTES,
          new LinkedBlockingQueue<>(),
          new DefaultThreadFactory(prefix, true));
    }
  }

  @Benchmark
  public void pump(Items items) {
    exchange();
    long now = received.sum();
    if (now == counted && ++idleExchanges == STALLED) {
      // The consumer grants credit as it reads, so an exchange carries payloads: a stream that
      // stopped would otherwise be reported as a low rate.
      throw new IllegalStateException(system + ": " + STALLED + " exchanges carried nothing");
    } else if (now != counted) {
      idleExchanges = 0;
    }
    items.items += now - counted;
    counted = now;
  }

  /** Exchanges in a row without a payload after which the stream counts as stalled. */
  private static final int STALLED = 100;

  private int idleExchanges;

  @TearDown(Level.Trial)
  public void tearDown() {
    boolean closed = server != null && !server.isOpen() || client != null && !client.isOpen();
    try {
      if (calls != null) {
        calls.stop();
      }
      if (client != null) {
        client.dispose();
      }
      if (server != null) {
        server.dispose();
      }
      if (server != null && client != null) {
        exchange();
      }
    } finally {
      if (toServer != null) {
        toServer.close();
        toClient.close();
      }
      request.unwrap().release();
      response.unwrap().release();
    }
    if (closed) {
      throw new IllegalStateException("an engine closed during the benchmark: results are void");
    }
  }
}
