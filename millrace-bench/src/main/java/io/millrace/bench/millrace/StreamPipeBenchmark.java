package io.millrace.bench.millrace;

import io.millrace.bench.BenchSystem;
import io.millrace.bench.Systems;
import io.millrace.core.Acceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
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
 * An endless request-stream (or a window of request-responses) between a client and a server engine
 * on one thread, through {@link PipeTransport}s instead of sockets: the bench's own responder and
 * consumer of each system (the core, a flavour, an RPC flavour), with the same credit, but no
 * system calls and no second core. The socket bench's throughput on this virtual machine swings
 * with the host's load, by 4x between runs of one build on some days; this one measures what a
 * payload costs both sides together in Java. Its iterations spread by about 15 %, but whole forks
 * of some systems by up to half (docs/benchmarks.md, thirty-first session): compare builds over
 * several forks.
 *
 * <p>{@code items} (an auxiliary counter, per second) is the figure: payloads (or answers) received
 * by the client. {@code pump} itself is one exchange (the client's frames read by the server, then
 * the server's by the client), about a thousand payloads.
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

  /**
   * {@code request-stream}: one endless stream. {@code request-channel}: one endless channel, the
   * server echoing what the client sends. {@code request-response}: {@link #WINDOW} calls in
   * flight, each answered call replaced by a new one from its answer's callback on the client's
   * loop, as the socket bench's throughput mode keeps them.
   */
  @Param({"request-stream"})
  String interaction;

  /** Request-response calls kept in flight: the socket bench's default window. */
  static final int WINDOW = 1024;

  /**
   * Which side runs the flavour's code, the other running the core's: {@code both}, {@code client}
   * (the flavour's consumer against the core's responder) or {@code server} (the core's consumer
   * against the flavour's responder). One side at a time tells where a flavour's extra time per
   * payload goes. The core's responder answers any request with the raw payload, so the RPC systems
   * take {@code both} only.
   */
  @Param({"both"})
  String flavourSide;

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
    if (!(bench instanceof FlavourSystem) && !(bench instanceof MillraceSystem)) {
      throw new IllegalArgumentException(system + " is not a Millrace system");
    }
    boolean flavourServer;
    boolean flavourClient;
    switch (flavourSide) {
      case "both" -> flavourServer = flavourClient = bench instanceof FlavourSystem;
      case "client", "server" -> {
        if (!(bench instanceof FlavourSystem) || bench instanceof RpcFlavourSystem) {
          throw new IllegalArgumentException(
              system + " runs with flavourSide=both only (the other side would be the core's)");
        }
        flavourClient = flavourSide.equals("client");
        flavourServer = !flavourClient;
      }
      default -> throw new IllegalArgumentException("flavourSide: both, client or server");
    }
    FlavourSystem flavour = flavourServer || flavourClient ? (FlavourSystem) bench : null;
    Acceptor acceptor;
    if (flavourServer) {
      acceptor = flavour.acceptor(response, handled);
    } else {
      Responder core = MillraceSystem.responder(response, handled);
      acceptor = (setup, connection) -> core;
    }
    ConnectionConfig clientConfig =
        flavourClient ? flavour.clientConfig() : ConnectionConfig.DEFAULT;
    toServer = new PipeTransport();
    toClient = new PipeTransport();
    server = ConnectionEngine.server(toClient, ConnectionConfig.DEFAULT, acceptor, null);
    server.start(null, null);
    client = ConnectionEngine.client(toServer, clientConfig, null);
    client.start(null, null);
    if (flavourClient) {
      calls = flavour.calls(client, request);
    }
    switch (interaction) {
      case "request-stream" -> {
        if (calls != null) {
          calls.startStream(received);
        } else {
          MillraceSystem.startStream(client, request, received);
        }
      }
      case "request-channel" -> {
        if (calls != null) {
          calls.startChannel(received);
        } else {
          MillraceSystem.startChannel(client, request, received);
        }
      }
      case "request-response" -> client.executor().execute(this::startCalls);
      default ->
          throw new IllegalArgumentException(
              "interaction: request-stream, request-channel or request-response");
    }
    for (int i = 0; i < 100 && received.sum() == 0; i++) {
      exchange();
    }
    if (received.sum() == 0) {
      throw new IllegalStateException(system + ": no payload arrived");
    }
  }

  /** Starts {@link #WINDOW} calls, each answer starting the next. On the client's loop. */
  private void startCalls() {
    if (calls != null) {
      Runnable again =
          new Runnable() {
            @Override
            public void run() {
              received.increment();
              calls.requestResponse(this);
            }
          };
      for (int i = 0; i < WINDOW; i++) {
        calls.requestResponse(again);
      }
    } else {
      StreamListener again =
          new StreamListener() {
            @Override
            public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
              received.increment();
              client.requestResponse(null, request, this);
            }
          };
      for (int i = 0; i < WINDOW; i++) {
        client.requestResponse(null, request, again);
      }
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
