package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Acceptor;
import io.millrace.core.AsyncAcceptor;
import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.RequestResponseFrame;
import io.millrace.frame.RequestStreamFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every transport must show, end to end over real connections: each transport's test
 * class extends this and says how to start a server, connect a client and open a raw connection
 * that speaks bytes (for peers that misbehave).
 */
abstract class TransportSuite {

  /** A running server. */
  interface ServerHandle extends AutoCloseable {
    /** Graceful shutdown, as a user's {@code shutdown()}. */
    void shutdown();

    /** Waits for the server to terminate after a shutdown. */
    boolean awaitTermination(Duration timeout) throws InterruptedException;

    /** Closes everything at once (the test's own cleanup). */
    @Override
    void close();
  }

  /** What a test needs from a server beyond the defaults. */
  static final class ServerOptions {
    ConnectionConfig config = ConnectionConfig.DEFAULT;
    Acceptor acceptor;
    AsyncAcceptor asyncAcceptor;
    ByteBufAllocator allocator = ByteBufAllocator.DEFAULT;
    int maxConnections = 65_536;
    int eventLoopThreads;

    ServerOptions config(ConnectionConfig config) {
      this.config = config;
      return this;
    }

    ServerOptions acceptor(Acceptor acceptor) {
      this.acceptor = acceptor;
      return this;
    }

    ServerOptions asyncAcceptor(AsyncAcceptor asyncAcceptor) {
      this.asyncAcceptor = asyncAcceptor;
      return this;
    }

    ServerOptions allocator(ByteBufAllocator allocator) {
      this.allocator = allocator;
      return this;
    }

    /** One loop puts every connection on the same thread; 0 leaves the server's default. */
    ServerOptions eventLoopThreads(int eventLoopThreads) {
      this.eventLoopThreads = eventLoopThreads;
      return this;
    }

    ServerOptions maxConnections(int maxConnections) {
      this.maxConnections = maxConnections;
      return this;
    }
  }

  /** A connection that writes and reads raw frames, to play a broken or hostile peer. */
  interface RawPeer extends AutoCloseable {
    /** Sends one frame (without transport framing; the peer adds it). Releases {@code frame}. */
    void send(ByteBuf frame) throws Exception;

    /** Sends bytes exactly as given, below the transport's framing. */
    void sendRaw(byte[] bytes) throws Exception;

    /**
     * Sends frames given each with a 3-byte length prefix, framed as the transport frames them;
     * waits while the connection cannot take more (as a socket write would block).
     */
    void sendFrames(byte[] lengthPrefixedFrames) throws Exception;

    /** Reads the next frame, or null when the connection closed; fails after the timeout. */
    ByteBuf read(Duration timeout) throws Exception;

    @Override
    void close();
  }

  protected abstract ServerHandle startServer(ServerOptions options) throws Exception;

  private ServerHandle startServer(
      ConnectionConfig config, Acceptor acceptor, ByteBufAllocator allocator) throws Exception {
    return startServer(new ServerOptions().config(config).acceptor(acceptor).allocator(allocator));
  }

  protected abstract Connection connect(ServerHandle server, ConnectionConfig config)
      throws Exception;

  protected abstract RawPeer openRaw(ServerHandle server) throws Exception;

  /** Largest frame header prefix a raw peer can claim (to test the frame-length limit). */
  protected abstract void sendOversizedFrameHeader(RawPeer peer, int length) throws Exception;

  /**
   * Whether a connection beyond the server's limit is told so with ERROR[REJECTED_SETUP]; where a
   * handshake comes first (TLS, WebSocket) it is closed instead.
   */
  protected boolean refusalIsAnError() {
    return true;
  }

  private final java.util.List<AutoCloseable> resources = new java.util.ArrayList<>();

  @AfterEach
  void closeResources() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    resources.clear();
  }

  private <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }

  private ServerHandle server(ConnectionConfig config, Responder responder) throws Exception {
    return track(startServer(config, (s, c) -> responder, ByteBufAllocator.DEFAULT));
  }

  static ByteBuf utf8(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
  }

  /** Echo for request-response and channel; streams of N numbered items. */
  static final Responder ECHO =
      new Responder() {
        @Override
        public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
          stream.next(m == null ? null : m.retainedSlice(), d.retainedSlice());
          return null;
        }

        @Override
        public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
          long count = Long.parseLong(d.toString(StandardCharsets.UTF_8));
          return new StreamListener() {
            long sent;

            @Override
            public void onReady(Stream s) {
              while (sent < count && s.isReady()) {
                ByteBuf item =
                    ByteBufUtil.writeAscii(s.connection().alloc(), Long.toString(sent++));
                if (sent == count) {
                  s.nextAndComplete(null, item);
                } else {
                  s.next(null, item);
                }
              }
            }
          };
        }

        @Override
        public StreamListener requestChannel(
            Stream stream, ByteBuf m, ByteBuf d, boolean complete) {
          stream.next(null, d.retainedSlice());
          stream.request(Long.MAX_VALUE);
          return new StreamListener() {
            @Override
            public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
              s.next(
                  null,
                  data.retainedSlice()); // the requester grants unbounded credit in these tests
            }

            @Override
            public void onComplete(Stream s) {
              s.complete();
            }
          };
        }
      };

  /** Collects a stream's items and completes a future at the end. */
  static final class Collector implements StreamListener {
    final StringBuilder items = new StringBuilder();
    volatile String last;
    final CompletableFuture<String> done = new CompletableFuture<>();
    long count;
    final long batch;

    Collector(long batch) {
      this.batch = batch;
    }

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      last = data.toString(StandardCharsets.UTF_8);
      if (items.length() < 100_000) {
        if (metadata != null) {
          items.append(metadata.toString(StandardCharsets.UTF_8)).append('|');
        }
        items.append(data.toString(StandardCharsets.UTF_8)).append(',');
      }
      count++;
      if (batch > 0 && count % batch == 0) {
        stream.request(batch);
      }
    }

    @Override
    public void onComplete(Stream stream) {
      done.complete(items.toString());
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      done.completeExceptionally(
          new AssertionError("error 0x" + Integer.toHexString(errorCode) + ": " + message));
    }
  }

  @Test
  void requestResponse_roundTripsDataAndMetadata() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    Connection connection = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(0);
    connection.requestResponse(utf8("meta"), utf8("hello"), collector);
    assertThat(collector.done.get(5, TimeUnit.SECONDS)).isEqualTo("meta|hello,");
  }

  @Test
  void requestStream_batchesOfRequestN_deliverEveryItemInOrder() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    Connection connection = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(7);
    connection.requestStream(null, utf8("1000"), 7, collector);
    String items = collector.done.get(10, TimeUnit.SECONDS);
    assertThat(collector.count).isEqualTo(1000);
    assertThat(items).startsWith("0,1,2,3,").endsWith(",998,999,");
  }

  @Test
  void requestStream_unbounded_largeStreamCompletes() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    Connection connection = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(0);
    connection.requestStream(null, utf8("200000"), Integer.MAX_VALUE, collector);
    collector.done.get(30, TimeUnit.SECONDS);
    assertThat(collector.count).isEqualTo(200_000);
  }

  @Test
  void manyConcurrentRequests_allAnswered() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    Connection connection = connect(server, ConnectionConfig.DEFAULT);
    int requests = 2000;
    CountDownLatch answered = new CountDownLatch(requests);
    AtomicLong wrong = new AtomicLong();
    for (int i = 0; i < requests; i++) {
      String expected = "r" + i;
      connection.requestResponse(
          null,
          utf8(expected),
          new StreamListener() {
            @Override
            public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
              if (!data.toString(StandardCharsets.UTF_8).equals(expected)) {
                wrong.incrementAndGet();
              }
              answered.countDown();
            }
          });
    }
    assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(wrong.get()).isZero();
  }

  @Test
  void largePayload_aboveMaxFrameLength_fragmentedAndReassembled() throws Exception {
    ConnectionConfig config = ConnectionConfig.builder().maxFrameLength(64 * 1024).build();
    ServerHandle server = server(config, ECHO);
    Connection connection = connect(server, config);
    byte[] big = new byte[1_000_000];
    new java.util.Random(42).nextBytes(big);
    CompletableFuture<byte[]> echoed = new CompletableFuture<>();
    connection.requestResponse(
        null,
        Unpooled.wrappedBuffer(big.clone()),
        new StreamListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            echoed.complete(ByteBufUtil.getBytes(data));
          }
        });
    byte[] received = echoed.get(10, TimeUnit.SECONDS);
    assertThat(received.length).isEqualTo(big.length);
    assertThat(java.util.Arrays.mismatch(received, big)).as("first differing byte").isEqualTo(-1);
  }

  @Test
  void requestChannel_echoesAndCompletes() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    Connection connection = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(0);
    connection
        .executor()
        .execute(
            () -> {
              Stream channel =
                  connection.requestChannel(
                      null,
                      utf8("first"),
                      Long.MAX_VALUE,
                      false,
                      new StreamListener() {
                        int sent;

                        @Override
                        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
                          collector.onNext(s, m, d);
                        }

                        @Override
                        public void onComplete(Stream s) {
                          collector.onComplete(s);
                        }

                        @Override
                        public void onReady(Stream s) {
                          while (sent < 100 && s.isReady()) {
                            s.next(null, utf8("i" + sent++));
                          }
                          if (sent == 100) {
                            sent++;
                            s.complete();
                          }
                        }
                      });
              assertThat(channel.streamId()).isOdd();
            });
    String items = collector.done.get(10, TimeUnit.SECONDS);
    assertThat(collector.count).isEqualTo(101);
    assertThat(items).startsWith("first,i0,i1,").endsWith("i99,");
  }

  @Test
  void frameLongerThanLimit_connectionErrorAndServerKeepsServingOthers() throws Exception {
    ServerHandle server = server(ConnectionConfig.builder().maxFrameLength(1024).build(), ECHO);
    try (RawPeer raw = openRaw(server)) {
      raw.send(setupFrame());
      sendOversizedFrameHeader(raw, 1_000_000);
      assertConnectionError(raw, ErrorCode.CONNECTION_ERROR);
    }
    assertServes(server);
  }

  @Test
  void garbageAfterSetup_connectionErrorAndServerKeepsServingOthers() throws Exception {
    ServerHandle server = server(ConnectionConfig.DEFAULT, ECHO);
    try (RawPeer raw = openRaw(server)) {
      raw.send(setupFrame());
      raw.send(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 1, (byte) 0xFC, 0, 1, 2, 3}));
      assertConnectionError(raw, ErrorCode.CONNECTION_ERROR);
    }
    assertServes(server);
  }

  @Test
  void silentConnection_closedWithinSetupTimeout() throws Exception {
    ServerHandle server =
        server(ConnectionConfig.builder().setupTimeout(Duration.ofMillis(300)).build(), ECHO);
    try (RawPeer raw = openRaw(server)) {
      long start = System.nanoTime();
      assertConnectionError(raw, ErrorCode.INVALID_SETUP);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }
  }

  /**
   * A client asks for an endless stream and never reads: the server stops producing when the
   * transport stops being writable, so its memory stays bounded, and others are still served.
   */
  @Test
  void nonReadingClient_endlessStream_serverMemoryBounded() throws Exception {
    PooledByteBufAllocator allocator = new PooledByteBufAllocator(true);
    ServerHandle server = track(startServer(ConnectionConfig.DEFAULT, (s, c) -> ECHO, allocator));
    try (RawPeer raw = openRaw(server)) {
      raw.send(setupFrame());
      ByteBuf data = utf8("1000000000");
      raw.send(
          RequestStreamFrame.encode(
              ByteBufAllocator.DEFAULT, 0, 1, false, Integer.MAX_VALUE, null, data));
      data.release();
      // The producer has stopped once the server's buffer memory stops growing.
      awaitSteady(
          () -> allocator.metric().usedDirectMemory() + allocator.metric().usedHeapMemory());
      long used = allocator.metric().usedDirectMemory() + allocator.metric().usedHeapMemory();
      assertThat(used).as("server buffer memory").isLessThan(16L << 20);
      assertServes(server);
    }
  }

  /**
   * A stream that always has credit, fed by a producer that always has more, to a peer that reads
   * all it gets, must not keep its event loop from the other connections on it: another
   * connection's request is read and answered within about a turn of the stream's writes (4,096).
   * Netty 4.2 runs a loop's tasks for up to a second before it polls its sockets again (it looks at
   * the clock every 64 tasks), so a turn continued as a plain task held that other request back for
   * about a second each time: about 130,000 writes of this stream per call over TCP here, against
   * about 4,000 with the turns continued after the loop's poll.
   */
  @Test
  void endlessStreamToAFastPeer_anotherConnectionOnItsLoopIsStillAnswered() throws Exception {
    AtomicLong written = new AtomicLong();
    PayloadEncoder<Object> oneByte =
        new PayloadEncoder<>() {
          @Override
          public int length(Object value) {
            return 1;
          }

          @Override
          public void encode(Object value, ByteBuf out, int index, int length) {
            out.setByte(index, 'x');
          }
        };
    Responder endless =
        new Responder() {
          @Override
          public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
            stream.next(null, d.retainedSlice());
            return null;
          }

          @Override
          public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
            return new StreamListener() {
              @Override
              public void onReady(Stream s) {
                while (s.isReady()) {
                  s.next(null, written, oneByte);
                  written.incrementAndGet();
                  // Slower than the peer reads, so the socket does not fill and the transport
                  // stays writable: only the loop's turns hold the stream back.
                  long until = System.nanoTime() + 5_000;
                  while (System.nanoTime() < until) {
                    // (Thread.onSpinWait() counts as blocking for the loop-blocking detector)
                  }
                }
              }
            };
          }
        };
    ServerHandle server =
        track(startServer(new ServerOptions().acceptor((s, c) -> endless).eventLoopThreads(1)));
    // Each on a client of its own (a config other than the default), so on loops of their own.
    Connection streaming = connect(server, ConnectionConfig.builder().build());
    Connection other = connect(server, ConnectionConfig.builder().build());
    streaming.requestStream(null, utf8("go"), Integer.MAX_VALUE, new StreamListener() {});
    for (int i = 0; i < 1000 && written.get() < 20_000; i++) {
      Thread.sleep(10);
    }
    assertThat(written.get()).as("the stream is flowing").isGreaterThanOrEqualTo(20_000);
    long[] waited = new long[9];
    for (int i = 0; i < waited.length; i++) {
      long before = written.get();
      Collector answer = new Collector(0);
      other.requestResponse(null, utf8("ping"), answer);
      assertThat(answer.done.get(30, TimeUnit.SECONDS)).isEqualTo("ping,");
      waited[i] = written.get() - before;
    }
    // The median, so that a call or two whose threads the OS left waiting do not count.
    long[] sorted = waited.clone();
    Arrays.sort(sorted);
    assertThat(sorted[sorted.length / 2])
        .as("writes of the stream while another call waited: %s", Arrays.toString(waited))
        .isLessThan(65_536);
  }

  /**
   * A client floods requests and never reads the responses: the server stops reading from it once
   * its queue for that client is full, so the flood backs up into the client's socket.
   */
  @Test
  void nonReadingClient_requestFlood_serverStopsReadingAndMemoryBounded() throws Exception {
    PooledByteBufAllocator allocator = new PooledByteBufAllocator(true);
    ConnectionConfig config =
        ConnectionConfig.builder().maxQueuedBytes(1 << 20).maxConcurrentStreams(1 << 20).build();
    ServerHandle server = track(startServer(config, (s, c) -> ECHO, allocator));
    RawPeer raw = openRaw(server);
    raw.send(setupFrame());
    int total = 2_000_000;
    AtomicLong sent = new AtomicLong();
    Thread flooder =
        new Thread(
            () -> {
              try {
                ByteBuf chunk = Unpooled.buffer(64 * 1024);
                ByteBuf payload = Unpooled.wrappedBuffer(new byte[100]);
                int id = 1;
                while (id < 2 * total) {
                  chunk.clear();
                  int inChunk = 0;
                  while (chunk.writableBytes() > 200 && id < 2 * total) {
                    ByteBuf frame =
                        RequestResponseFrame.encode(
                            ByteBufAllocator.DEFAULT, 3, id, false, null, payload);
                    frame.setMedium(0, frame.readableBytes() - 3);
                    chunk.writeBytes(frame);
                    frame.release();
                    id += 2;
                    inChunk++;
                  }
                  raw.sendFrames(io.netty.buffer.ByteBufUtil.getBytes(chunk));
                  sent.addAndGet(inChunk);
                }
              } catch (Exception e) {
                // the socket was closed by the test: expected
              }
            });
    flooder.setDaemon(true);
    flooder.start();
    // Wait until the flood stalls: no progress for a full second (bounded to 15 s).
    long last = -1;
    for (int i = 0; i < 60; i++) {
      Thread.sleep(250);
      long now = sent.get();
      if (i % 4 == 3) {
        if (now == last) {
          break;
        }
        last = now;
      }
    }
    assertThat(sent.get())
        .as("requests written before the server stopped reading")
        .isLessThan(total);
    long used = allocator.metric().usedDirectMemory() + allocator.metric().usedHeapMemory();
    assertThat(used).as("server buffer memory").isLessThan(24L << 20);
    assertServes(server);
    raw.close();
    flooder.join(5000);
  }

  /**
   * Waits until {@code value} has not changed for half a second (bounded to 15 s): the awaited
   * condition for "the system has settled", instead of a fixed sleep.
   */
  static void awaitSteady(java.util.function.LongSupplier value) throws InterruptedException {
    long last = value.getAsLong();
    long steadySince = System.nanoTime();
    long deadline = steadySince + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < deadline) {
      Thread.sleep(50);
      long now = value.getAsLong();
      if (now != last) {
        last = now;
        steadySince = System.nanoTime();
      } else if (System.nanoTime() - steadySince > TimeUnit.MILLISECONDS.toNanos(500)) {
        return;
      }
    }
    throw new AssertionError("never settled; last value " + last);
  }

  // ------------------------------------------------------------------ shutdown and close

  /** Streams the server keeps open, so tests decide when they finish. */
  static final class HeldStreams implements Responder {
    final java.util.List<Stream> held = new java.util.concurrent.CopyOnWriteArrayList<>();
    final CountDownLatch opened = new CountDownLatch(1);

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
      held.add(stream);
      opened.countDown();
      return null;
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
      stream.next(null, d.retainedSlice());
      return null;
    }
  }

  @Test
  void serverShutdown_openStreamFinishes_lateRequestRejected_clientClosesGracefully()
      throws Exception {
    HeldStreams responder = new HeldStreams();
    ServerHandle server = track(startServer(new ServerOptions().acceptor((s, c) -> responder)));
    Connection client = connect(server, ConnectionConfig.DEFAULT);
    Collector stream = new Collector(0);
    client.requestStream(null, utf8("q"), 10, stream);
    assertThat(responder.opened.await(5, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<CloseReason> draining = new CompletableFuture<>();
    client.addListener(
        new ConnectionListener() {
          @Override
          public void onDraining(Connection c, CloseReason reason) {
            draining.complete(reason);
          }
        });

    server.shutdown();
    assertThat(draining.get(5, TimeUnit.SECONDS).kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_PEER);
    Collector late = new Collector(0);
    client.requestResponse(null, utf8("late"), late);
    assertThat(late.done)
        .failsWithin(5, TimeUnit.SECONDS)
        .withThrowableThat()
        .withMessageContaining("0x202");

    Stream held = responder.held.get(0);
    held.connection().executor().execute(() -> held.nextAndComplete(null, utf8("last")));
    assertThat(stream.done.get(5, TimeUnit.SECONDS)).isEqualTo("last,");
    assertThat(server.awaitTermination(Duration.ofSeconds(10))).isTrue();
    assertThat(client.onClose().toCompletableFuture().get(5, TimeUnit.SECONDS).kind())
        .isEqualTo(CloseReason.Kind.CLOSED_BY_PEER);
  }

  @Test
  void serverShutdown_rawPeerRequestAfterTheClose_answeredRejected_notDropped() throws Exception {
    HeldStreams responder = new HeldStreams();
    ServerHandle server = track(startServer(new ServerOptions().acceptor((s, c) -> responder)));
    try (RawPeer raw = openRaw(server)) {
      raw.send(setupFrame());
      raw.send(RequestStreamFrame.encode(ByteBufAllocator.DEFAULT, 0, 1, false, 5, null, null));
      assertThat(responder.opened.await(5, TimeUnit.SECONDS)).isTrue();
      server.shutdown();
      assertThat(readType(raw)).isEqualTo(FrameType.ERROR); // CONNECTION_CLOSE
      ByteBuf barrier = raw.read(Duration.ofSeconds(5));
      assertThat(FrameHeader.type(barrier)).isEqualTo(FrameType.KEEPALIVE);
      // A request that crossed the CONNECTION_CLOSE on the wire.
      ByteBuf data = utf8("crossing");
      raw.send(RequestResponseFrame.encode(ByteBufAllocator.DEFAULT, 0, 3, false, null, data));
      data.release();
      ByteBuf rejected = raw.read(Duration.ofSeconds(5));
      try {
        assertThat(FrameHeader.type(rejected)).isEqualTo(FrameType.ERROR);
        assertThat(FrameHeader.streamId(rejected)).isEqualTo(3);
        assertThat(rejected.getInt(rejected.readerIndex() + FrameHeader.SIZE))
            .isEqualTo(ErrorCode.REJECTED);
      } finally {
        rejected.release();
      }
      // Answer the barrier, as a peer that read the close does; the open stream then ends it.
      ByteBuf answer =
          io.millrace.frame.KeepAliveFrame.encode(
              ByteBufAllocator.DEFAULT,
              0,
              false,
              0,
              io.millrace.frame.KeepAliveFrame.data(barrier));
      barrier.release();
      raw.send(answer);
      Stream held = responder.held.get(0);
      held.connection().executor().execute(held::complete);
      assertThat(readType(raw)).isEqualTo(FrameType.PAYLOAD); // the stream's end
      assertThat(raw.read(Duration.ofSeconds(5))).as("end of stream after the last frame").isNull();
    }
    // The peer closed its side too: the server is done.
    assertThat(server.awaitTermination(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void closeRightAfterABurst_everyFrameReachesThePeerBeforeTheEnd() throws Exception {
    int items = 100_000;
    Responder burst =
        new Responder() {
          @Override
          public StreamListener requestStream(Stream stream, ByteBuf m, ByteBuf d) {
            // Everything at once, ignoring writability: megabytes wait in the outbound queue...
            for (int i = 0; i < items - 1; i++) {
              stream.next(null, ByteBufUtil.writeAscii(stream.connection().alloc(), "x" + i));
            }
            stream.nextAndComplete(null, utf8("last"));
            // ...when the connection is told to close.
            stream.connection().close();
            return null;
          }
        };
    ServerHandle server = track(startServer(new ServerOptions().acceptor((s, c) -> burst)));
    Connection client = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(0);
    client.requestStream(null, utf8("q"), Integer.MAX_VALUE, collector);
    collector.done.get(15, TimeUnit.SECONDS);
    assertThat(collector.count).isEqualTo(items);
    assertThat(collector.last).isEqualTo("last");
    assertThat(client.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS).isGraceful())
        .isTrue();
  }

  @Test
  void connectionBeyondTheServersLimit_refusedWithRejectedSetup_othersServed() throws Exception {
    ServerHandle server =
        track(startServer(new ServerOptions().acceptor((s, c) -> ECHO).maxConnections(1)));
    Connection first = connect(server, ConnectionConfig.DEFAULT);
    if (refusalIsAnError()) {
      try (RawPeer second = openRaw(server)) {
        assertConnectionError(second, ErrorCode.REJECTED_SETUP);
      }
    } else {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> openRaw(server).close())
          .as("the handshake of a connection beyond the limit")
          .isInstanceOf(java.io.IOException.class);
    }
    Collector collector = new Collector(0);
    first.requestResponse(null, utf8("first still served"), collector);
    assertThat(collector.done.get(5, TimeUnit.SECONDS)).isEqualTo("first still served,");
  }

  @Test
  void asyncAcceptor_decidesOnAnotherThread_requestsSentWithSetupAreServed() throws Exception {
    java.util.concurrent.ExecutorService auth =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      ServerHandle server =
          track(
              startServer(
                  new ServerOptions()
                      .asyncAcceptor(
                          (setup, connection) ->
                              CompletableFuture.supplyAsync(
                                  () -> {
                                    try {
                                      Thread.sleep(200); // a slow authentication service
                                    } catch (InterruptedException e) {
                                      Thread.currentThread().interrupt();
                                    }
                                    return ECHO;
                                  },
                                  auth))));
      Connection client = connect(server, ConnectionConfig.DEFAULT);
      Collector collector = new Collector(0);
      client.requestResponse(null, utf8("sent with SETUP"), collector);
      assertThat(collector.done.get(5, TimeUnit.SECONDS)).isEqualTo("sent with SETUP,");
    } finally {
      auth.shutdownNow();
    }
  }

  private static int readType(RawPeer raw) throws Exception {
    ByteBuf frame = raw.read(Duration.ofSeconds(5));
    assertThat(frame).isNotNull();
    try {
      return FrameHeader.type(frame);
    } finally {
      frame.release();
    }
  }

  private static ByteBuf setupFrame() {
    return SetupFrame.encode(
        ByteBufAllocator.DEFAULT, 0, false, 30_000, 90_000, null, "a/b", "c/d", null, null);
  }

  private static void assertConnectionError(RawPeer raw, int code) throws Exception {
    ByteBuf frame = raw.read(Duration.ofSeconds(5));
    assertThat(frame).as("an ERROR frame before the close").isNotNull();
    try {
      assertThat(FrameHeader.type(frame)).isEqualTo(FrameType.ERROR);
      assertThat(frame.getInt(frame.readerIndex() + FrameHeader.SIZE)).isEqualTo(code);
    } finally {
      frame.release();
    }
    ByteBuf after = raw.read(Duration.ofSeconds(5));
    if (after != null) {
      after.release();
    }
    assertThat(after).as("connection closed after the error").isNull();
  }

  private void assertServes(ServerHandle server) throws Exception {
    Connection honest = connect(server, ConnectionConfig.DEFAULT);
    Collector collector = new Collector(0);
    honest.requestResponse(null, utf8("still here"), collector);
    assertThat(collector.done.get(5, TimeUnit.SECONDS)).isEqualTo("still here,");
  }
}
