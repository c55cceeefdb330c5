package io.millrace.bench.millrace;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.IdleConnections;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

/**
 * Millrace at the core level: the low-level {@link Connection}/{@link Stream} API over TCP, one
 * event loop per side, default {@link io.millrace.core.ConnectionConfig} (every limit on).
 *
 * <p>Payloads are one unreleasable buffer per side, passed again and again (see {@link #payload}).
 *
 * <p>Consumers grant {@link #INITIAL} (1024) up front and {@link #BATCH} (256) more each time 256
 * arrived, exactly as the rsocket-java client does in this harness. Payload buffers are pooled and
 * sent as retained duplicates of one buffer, so the application allocates nothing per message; the
 * engine copies small payloads into each frame.
 */
public final class MillraceSystem implements BenchSystem {
  private final ConnectionConfig config;

  /** {@code resume}: both sides with session resumption on (the replay store in every write). */
  public MillraceSystem(boolean resume) {
    this.config =
        resume
            ? ConnectionConfig.builder().resumption(io.millrace.core.Resumption.defaults()).build()
            : ConnectionConfig.DEFAULT;
  }

  static final int BATCH = 256;

  /** Fire-and-forget messages sent per event-loop task before yielding to I/O. */
  static final int FNF_BATCH = 1024;

  /** Connection attempts at most in flight while opening idle connections. */
  static final int CONNECTS_IN_FLIGHT = 256;

  /** Credit a consumer grants up front; then {@link #BATCH} more for every batch received. */
  static final int INITIAL = 1024;

  /** Payloads a channel's echo asks for ahead of echoing them (never beyond its own credit). */
  static final int ECHO_WINDOW = 1024;

  @Override
  public String name() {
    return "millrace";
  }

  /**
   * The bytes sent with every message: one direct buffer wrapped so that the engine's release after
   * encoding is a no-op. This is how an application sends the same bytes repeatedly through an API
   * that takes ownership, with no per-message allocation or reference counting.
   */
  static ByteBuf payload(int size) {
    ByteBuf payload = PooledByteBufAllocator.DEFAULT.directBuffer(size);
    payload.writerIndex(size);
    return Unpooled.unreleasableBuffer(payload);
  }

  @Override
  public BenchServer startServer(int port, int payloadSize, LongAdder handled) throws Exception {
    return serve(port, payloadSize, config, response -> new BenchResponder(response, handled));
  }

  /**
   * A server on 127.0.0.1:{@code port} with one event loop, answering with {@code responder} made
   * for an unreleasable response of {@code payloadSize} bytes.
   */
  static BenchServer serve(
      int port,
      int payloadSize,
      ConnectionConfig config,
      java.util.function.Function<ByteBuf, Responder> responder)
      throws Exception {
    return serveWith(
        port,
        payloadSize,
        config,
        response -> {
          Responder r = responder.apply(response);
          return (setup, connection) -> r;
        });
  }

  /** As {@link #serve}, with an acceptor that chooses each connection's responder. */
  static BenchServer serveWith(
      int port,
      int payloadSize,
      ConnectionConfig config,
      java.util.function.Function<ByteBuf, io.millrace.core.Acceptor> acceptor)
      throws Exception {
    ByteBuf response = payload(payloadSize);
    io.millrace.core.Acceptor a = acceptor.apply(response);
    MillraceServer server =
        BenchTransport.listen(MillraceServer.builder(), port)
            .config(config)
            .eventLoopThreads(1)
            .acceptor(a)
            .bind();
    return () -> {
      server.close();
      response.unwrap().release();
    };
  }

  /**
   * Idle connections: one client with one event loop for all of them, KEEPALIVE every {@code
   * keepAliveSeconds} (max lifetime three times that), at most {@link #CONNECTS_IN_FLIGHT} connects
   * at a time.
   */
  @Override
  public IdleConnections openIdle(
      int port, int count, int keepAliveSeconds, IntFunction<InetSocketAddress> localAddress)
      throws Exception {
    ConnectionConfig config =
        ConnectionConfig.builder()
            .keepAlive(
                Duration.ofSeconds(keepAliveSeconds), Duration.ofSeconds(3L * keepAliveSeconds))
            .build();
    MillraceClient client = MillraceClient.builder().config(config).eventLoopThreads(1).build();
    InetSocketAddress server = new InetSocketAddress("127.0.0.1", port);
    List<Connection> open = new ArrayList<>(count);
    Semaphore inFlight = new Semaphore(CONNECTS_IN_FLIGHT);
    List<CompletableFuture<Connection>> pending = new ArrayList<>(count);
    try {
      for (int i = 0; i < count; i++) {
        inFlight.acquire();
        CompletableFuture<Connection> connect =
            client.connect(server, localAddress.apply(i), null, null);
        connect.whenComplete((c, e) -> inFlight.release());
        pending.add(connect);
      }
      for (CompletableFuture<Connection> connect : pending) {
        open.add(connect.get(60, TimeUnit.SECONDS));
      }
    } catch (Exception | Error e) {
      client.shutdownNow();
      throw e;
    }
    ByteBuf probeData = payload(8);
    return new IdleConnections() {
      @Override
      public int open() {
        int n = 0;
        for (Connection c : open) {
          if (c.isOpen()) {
            n++;
          }
        }
        return n;
      }

      @Override
      public long probeMicros() throws Exception {
        long start = System.nanoTime();
        Connection fresh = client.connect(server, null, null, null).get(10, TimeUnit.SECONDS);
        CompletableFuture<Void> answered = new CompletableFuture<>();
        fresh.requestResponse(
            null,
            probeData,
            new StreamListener() {
              @Override
              public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
                answered.complete(null);
              }

              @Override
              public void onError(Stream stream, int errorCode, String message) {
                answered.completeExceptionally(new IllegalStateException(message));
              }
            });
        answered.get(10, TimeUnit.SECONDS);
        long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
        fresh.dispose();
        return micros;
      }

      @Override
      public void close() {
        client.shutdownNow();
        try {
          client.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        probeData.unwrap().release();
      }
    };
  }

  @Override
  public boolean supportsTransport(String transport) {
    return true;
  }

  @Override
  public BenchClient connect(int port, int payloadSize) throws Exception {
    MillraceClient client =
        BenchTransport.client(MillraceClient.builder()).config(config).eventLoopThreads(1).build();
    Connection connection =
        client.connect(BenchTransport.uri(port), null, null).get(10, TimeUnit.SECONDS);
    return new Client(client, connection, payload(payloadSize));
  }

  /** The core responder for every interaction, for systems that borrow part of it. */
  static Responder responder(ByteBuf response, LongAdder handled) {
    return new BenchResponder(response, handled);
  }

  /** The server side of every interaction. */
  private static final class BenchResponder implements Responder {
    private final ByteBuf response;
    private final LongAdder handled;

    BenchResponder(ByteBuf response, LongAdder handled) {
      this.response = response;
      this.handled = handled;
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      stream.next(null, response);
      handled.increment();
      return null;
    }

    @Override
    public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
      handled.increment();
    }

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      return new StreamListener() {
        @Override
        public void onReady(Stream s) {
          while (s.isReady()) {
            s.next(null, response);
            handled.increment();
          }
        }
      };
    }

    @Override
    public StreamListener requestChannel(
        Stream stream, ByteBuf metadata, ByteBuf data, boolean complete) {
      Echo echo = new Echo(handled);
      echo.onNext(stream, metadata, data);
      return echo;
    }
  }

  /**
   * Echoes a channel with a fixed inbound window of {@link #ECHO_WINDOW} payloads: what arrives
   * before there is outbound credit (or while the transport is full) waits in a queue that the
   * window bounds. Tying inbound requests to outbound credit instead couples the two credit loops
   * and, measured, collapses the channel into lockstep with one batch in flight.
   */
  private static final class Echo implements StreamListener {
    private final LongAdder handled;
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
    private long requested;

    Echo(LongAdder handled) {
      this.handled = handled;
    }

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      if (requested > 0) {
        requested--;
      }
      if (pending.isEmpty() && stream.isReady()) {
        stream.next(null, data.retainedSlice());
        handled.increment();
      } else {
        pending.add(data.retainedSlice());
      }
      refill(stream);
    }

    @Override
    public void onReady(Stream stream) {
      ByteBuf next;
      while (stream.isReady() && (next = pending.poll()) != null) {
        stream.next(null, next);
        handled.increment();
      }
      refill(stream);
    }

    private void refill(Stream stream) {
      long want = ECHO_WINDOW - pending.size() - requested;
      if (want >= ECHO_WINDOW / 4) {
        requested += want;
        stream.request(want);
      }
    }

    @Override
    public void onCancel(Stream stream) {
      release();
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      release();
    }

    private void release() {
      ByteBuf next;
      while ((next = pending.poll()) != null) {
        next.release();
      }
    }
  }

  /** The client side; everything it does runs on the connection's event loop. */
  private static final class Client implements BenchClient {
    private final MillraceClient client;
    private final Connection connection;
    private final ByteBuf payload;
    private Runnable lastCallback;
    private StreamListener lastListener;
    private Runnable threadCallback;
    private StreamListener threadListener;

    Client(MillraceClient client, Connection connection, ByteBuf payload) {
      this.client = client;
      this.connection = connection;
      this.payload = payload;
    }

    @Override
    public void requestResponse(Runnable onResponse) {
      if (!connection.executor().inEventLoop()) {
        // From an application thread: straight into the connection's hand-off queue. The cache
        // below is confined to the one application thread the harness uses.
        if (onResponse != threadCallback) {
          threadCallback = onResponse;
          threadListener = listener(onResponse);
        }
        connection.requestResponse(null, payload, threadListener);
        return;
      }
      if (onResponse != lastCallback) {
        lastCallback = onResponse;
        lastListener = listener(onResponse);
      }
      connection.requestResponse(null, payload, lastListener);
    }

    @Override
    public void requestResponse(Runnable onResponse, Runnable onFailure) {
      connection.requestResponse(
          null,
          payload,
          new StreamListener() {
            @Override
            public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
              onResponse.run();
            }

            @Override
            public void onError(Stream stream, int errorCode, String message) {
              onFailure.run();
            }
          });
    }

    private static StreamListener listener(Runnable onResponse) {
      return new StreamListener() {
        @Override
        public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
          onResponse.run();
        }
      };
    }

    @Override
    public boolean sendsFireAndForgetFromThreads() {
      return true;
    }

    /**
     * Hands each message to the loop through the connection's bounded queue; when the queue or the
     * transport is full, parks until the loop says it is ready again (no spinning, no polling).
     */
    @Override
    public void fireAndForgetFromThisThread(
        LongAdder sent, java.util.function.BooleanSupplier running) throws InterruptedException {
      sendFromThread(connection, sent, running, () -> connection.fireAndForget(null, payload));
    }

    @Override
    public void startFireAndForget(LongAdder sent) {
      pumpFireAndForget(connection, sent, () -> connection.fireAndForget(null, payload));
    }

    @Override
    public void startStream(LongAdder received) {
      MillraceSystem.startStream(connection, payload, received);
    }

    @Override
    public void startChannel(LongAdder received) {
      MillraceSystem.startChannel(connection, payload, received);
    }

    @Override
    public java.util.concurrent.ScheduledExecutorService eventLoop() {
      return connection.executor();
    }

    @Override
    public void close() {
      connection.dispose();
      client.close();
      payload.unwrap().release();
    }
  }

  /**
   * Sends fire-and-forget messages on the connection's loop, a batch at a time while the transport
   * takes them, then lets the loop do I/O; {@code send} sends one and says whether it was sent
   * (false: the connection is closing, stop).
   */
  /**
   * Sends fire-and-forget messages with {@code send} from the calling thread while {@code running}
   * holds, as a careful user would: waiting while the connection's hand-off is full (no spinning),
   * and again when another sender filled it between the check and the send.
   */
  static void sendFromThread(
      Connection connection,
      LongAdder sent,
      java.util.function.BooleanSupplier running,
      Runnable send)
      throws InterruptedException {
    while (running.getAsBoolean() && connection.isOpen()) {
      if (!connection.isReadyForCalls()) {
        connection.awaitReadyForCalls(java.time.Duration.ofSeconds(1));
        continue;
      }
      try {
        send.run();
        sent.increment();
      } catch (java.util.concurrent.RejectedExecutionException e) {
        connection.awaitReadyForCalls(java.time.Duration.ofSeconds(1));
      } catch (io.millrace.core.StreamErrorException e) {
        return; // refused: the connection is draining or closed (a flavour that says so at once)
      }
    }
  }

  static void pumpFireAndForget(
      Connection connection, LongAdder sent, java.util.function.BooleanSupplier send) {
    Runnable pump =
        new Runnable() {
          @Override
          public void run() {
            if (!connection.isOpen()) {
              return;
            }
            for (int i = 0; i < FNF_BATCH && connection.isWritable(); i++) {
              if (!send.getAsBoolean()) {
                return;
              }
              sent.increment();
            }
            if (connection.isWritable()) {
              connection.executor().execute(this);
            } else {
              connection.executor().schedule(this, 50, TimeUnit.MICROSECONDS);
            }
          }
        };
    connection.executor().execute(pump);
  }

  /** Counts payloads and grants {@link #BATCH} more each time a batch arrived. */
  /**
   * Starts an endless request-stream of {@code payload} on {@code connection}'s loop, its payloads
   * counted into {@code received} (the core's consumer, granting credit as it reads).
   */
  static void startStream(Connection connection, ByteBuf payload, LongAdder received) {
    connection
        .executor()
        .execute(
            () -> connection.requestStream(null, payload, INITIAL, new BatchingConsumer(received)));
  }

  /**
   * Starts an endless request-channel on {@code connection}'s loop: {@code payload} sent whenever
   * the stream is ready, the answers counted into {@code received}.
   */
  static void startChannel(Connection connection, ByteBuf payload, LongAdder received) {
    connection
        .executor()
        .execute(
            () ->
                connection.requestChannel(
                    null,
                    payload,
                    BATCH,
                    false,
                    new BatchingConsumer(received) {
                      @Override
                      public void onReady(Stream stream) {
                        while (stream.isReady()) {
                          stream.next(null, payload);
                        }
                      }
                    }));
  }

  static class BatchingConsumer implements StreamListener {
    private final LongAdder received;
    private int sinceRequest;

    BatchingConsumer(LongAdder received) {
      this.received = received;
    }

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      received.increment();
      if (++sinceRequest == BATCH) {
        sinceRequest = 0;
        stream.request(BATCH);
      }
    }
  }
}
