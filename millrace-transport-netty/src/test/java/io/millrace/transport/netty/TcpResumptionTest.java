package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.Resumption;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.testing.ChaosProxy;
import io.millrace.testing.SequencedPayload;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Resumption over real connections (TCP, and for the chaos run also TLS, WebSocket and WSS, whose
 * records and messages the cuts land inside, and the in-JVM transport) through a {@link ChaosProxy}
 * that breaks them in every way: resets, cuts inside a frame, black holes only the keepalive
 * notices, refused reconnects and delays. A request-stream and a request-channel carry sequenced
 * payloads from 1 byte to 64 KiB (fragmented), request-response calls must each complete exactly
 * once, and fire-and-forget is counted at the server, through 100 forced disconnects (50 closed
 * connections over the in-JVM transport, which has one way to break); the server runs two event
 * loops, so a resumed connection often lands on another loop than its session and is moved. Netty's
 * paranoid leak detector fails the build on any leaked buffer.
 */
class TcpResumptionTest {
  private MillraceServer server;
  private MillraceClient client;
  private ChaosProxy proxy;

  @AfterEach
  void tearDown() throws Exception {
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  static ConnectionConfig config() {
    return ConnectionConfig.builder()
        .fragmentSize(16 * 1024)
        .keepAlive(Duration.ofMillis(100), Duration.ofMillis(600))
        .resumption(
            Resumption.builder().backoff(Duration.ofMillis(10), Duration.ofMillis(200)).build())
        .build();
  }

  /** Sends {@code total} sequenced items as credit and writability allow, then completes. */
  static final class Producer {
    final int total;
    int next;

    Producer(int total) {
      this.total = total;
    }

    void pump(Stream s) {
      while (next < total && s.credit() > 0 && s.isReady()) {
        s.next(null, SequencedPayload.item(s.connection().alloc(), next++));
      }
      if (next == total && !s.isOutboundDone()) {
        s.complete();
      }
    }
  }

  /** Checks items arrive in sequence, granting a credit per item. */
  static final class Checker {
    volatile int received;
    final List<String> problems = new CopyOnWriteArrayList<>();
    volatile boolean completed;
    volatile String error;

    void onNext(Stream stream, ByteBuf data) {
      String problem = SequencedPayload.check(data, received);
      received++;
      if (problem != null) {
        problems.add(problem);
      }
      stream.request(1);
    }
  }

  final AtomicInteger fnfSeen = new AtomicInteger();
  final List<String> serverProblems = new CopyOnWriteArrayList<>();

  final Responder responder =
      new Responder() {
        @Override
        public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
          int n = data.readInt();
          if (n != fnfSeen.getAndIncrement()) {
            serverProblems.add("fire-and-forget " + n + " out of order");
          }
        }

        @Override
        public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
          stream.nextAndComplete(null, data.retainedSlice());
          return null;
        }

        @Override
        public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
          Producer p = new Producer(data.readInt());
          p.pump(stream);
          return new StreamListener() {
            @Override
            public void onReady(Stream s) {
              p.pump(s);
            }
          };
        }

        @Override
        public StreamListener requestChannel(
            Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
          Producer p = new Producer(data.readInt());
          Checker in = new Checker();
          stream.request(4);
          p.pump(stream);
          return new StreamListener() {
            @Override
            public void onNext(Stream s, ByteBuf m, ByteBuf d) {
              in.onNext(s, d);
            }

            @Override
            public void onComplete(Stream s) {
              if (!in.problems.isEmpty() || in.received != p.total) {
                serverProblems.add("channel inbound: " + in.received + " " + in.problems);
              }
            }

            @Override
            public void onReady(Stream s) {
              p.pump(s);
            }
          };
        }
      };

  final List<Connection> serverConnections = new CopyOnWriteArrayList<>();

  static String onLoop(Connection c, java.util.concurrent.Callable<String> what) {
    try {
      return c.executor().submit(what).get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      return e.toString();
    }
  }

  private Connection start(int serverLoops) throws Exception {
    return start(serverLoops, "tcp");
  }

  /** A server on {@code scheme} behind the chaos proxy, and a client connected through it. */
  private Connection start(int serverLoops, String scheme) throws Exception {
    boolean secure = scheme.equals("tls") || scheme.equals("wss");
    String path = scheme.startsWith("ws") ? "/rsocket" : "";
    MillraceServer.Builder builder =
        MillraceServer.builder().listen(scheme + "://127.0.0.1:0" + path);
    // A black hole can fall on a reconnect still in its TLS or WebSocket handshake, where no
    // keepalive runs yet: the handshake's own timeout ends that attempt, bounded by the
    // keepalive's max lifetime (600 ms here), not by the 10 s connect timeout.
    MillraceClient.Builder clientBuilder = MillraceClient.builder();
    if (secure) {
      // Mutual TLS: every resume also passes the server's check that the same client comes back.
      builder.tls(
          ServerTls.builder(
                  io.millrace.testing.TestCertificates.path("server.pem"),
                  io.millrace.testing.TestCertificates.path("server.key"))
              .requireClientCertificates(io.millrace.testing.TestCertificates.path("ca.pem"))
              .build());
      clientBuilder.tls(
          ClientTls.builder()
              .trust(io.millrace.testing.TestCertificates.path("ca.pem"))
              .keyPair(
                  io.millrace.testing.TestCertificates.path("client.pem"),
                  io.millrace.testing.TestCertificates.path("client.key"))
              .build());
    }
    server =
        builder
            .config(config())
            .eventLoopThreads(serverLoops)
            .acceptor(
                (setup, connection) -> {
                  serverConnections.add(connection);
                  return responder;
                })
            .bind();
    proxy = new ChaosProxy(server.address());
    client = clientBuilder.config(config()).build();
    return client.connect(scheme + "://127.0.0.1:" + proxy.port() + path).get(5, TimeUnit.SECONDS);
  }

  /** Keeps the last few events, for the message of a failed wait. */
  private static void recent(List<String> events, String event) {
    events.add(event);
    while (events.size() > 6) {
      events.remove(0);
    }
  }

  private static ByteBuf intBuf(Connection c, int n) {
    return c.alloc().buffer(4).writeInt(n);
  }

  private static void await(String what, BooleanSupplier condition, long millis)
      throws InterruptedException {
    await(() -> what, condition, millis);
  }

  private static void await(
      java.util.function.Supplier<String> what, BooleanSupplier condition, long millis)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what.get());
      }
      Thread.sleep(2);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "tls", "ws", "wss"})
  void everyInteraction_survivesAHundredDisconnectsOfEveryKind(String scheme) throws Exception {
    Connection c = start(2, scheme);
    survivesDisconnects(
        c,
        100,
        i -> {
          switch (i % 5) {
            case 0:
              proxy.reset();
              break;
            case 1:
              proxy.cutAfterBytes(1 + (i * 7919) % 20_000); // inside whatever frame is passing
              proxy.reset(); // in case nothing more passes
              break;
            case 2:
              proxy.blackHole(); // only the keepalive (600 ms) notices
              break;
            case 3:
              proxy.refuse(150);
              proxy.reset();
              break;
            default:
              proxy.delay(5);
              proxy.reset();
              break;
          }
        },
        () -> proxy.delay(0));
    assertThat(proxy.refusedCount()).isPositive();
    if (scheme.equals("tls") || scheme.equals("wss")) {
      // After a hundred resumes the server still knows its client by its certificate.
      javax.net.ssl.SSLSession tls = serverConnections.get(0).tlsSession();
      assertThat(tls).isNotNull();
      assertThat(
              ((java.security.cert.X509Certificate) tls.getPeerCertificates()[0])
                  .getSubjectX500Principal()
                  .getName())
          .isEqualTo("CN=millrace-test-client");
    }
  }

  /**
   * A reconnect whose TLS or WebSocket handshake falls into a black hole is given up after the
   * reconnect bound (the keepalive's 600 ms max lifetime), not after the 10 s connect timeout:
   * three attempts start within 8 s. Then the session still resumes.
   */
  @ParameterizedTest
  @ValueSource(strings = {"tls", "ws"})
  void aBlackHoledReconnectHandshake_isGivenUpAtTheBound_andTheSessionResumesAfter(String scheme)
      throws Exception {
    Connection c = start(1, scheme);
    ByteBuf first = c.alloc().buffer().writeInt(1);
    assertThat(new Echoed(c, first).await()).isEqualTo(1);
    proxy.blackHoleNewConnections(true);
    int before = proxy.accepted();
    long cutAt = System.nanoTime();
    proxy.reset();
    await(
        () -> (proxy.accepted() - before) + " attempts so far",
        () -> proxy.accepted() - before >= 3,
        8_000);
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cutAt);
    assertThat(elapsedMillis)
        .as("two attempts given up, each after the 600 ms bound")
        .isGreaterThanOrEqualTo(2 * 600L);
    proxy.blackHoleNewConnections(false);
    ByteBuf second = c.alloc().buffer().writeInt(2);
    assertThat(new Echoed(c, second).await()).as("resumed after the black hole").isEqualTo(2);
  }

  /** One request-response on the loop; {@link #await} gives the int echoed back. */
  private static final class Echoed {
    private final java.util.concurrent.CompletableFuture<Integer> answer =
        new java.util.concurrent.CompletableFuture<>();

    Echoed(Connection c, ByteBuf request) {
      c.executor()
          .execute(
              () ->
                  c.requestResponse(
                      null,
                      request,
                      new StreamListener() {
                        @Override
                        public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
                          answer.complete(data.readInt());
                        }

                        @Override
                        public void onError(Stream s, int code, String message) {
                          answer.completeExceptionally(new AssertionError(code + " " + message));
                        }
                      }));
    }

    int await() throws Exception {
      return answer.get(15, TimeUnit.SECONDS);
    }
  }

  /**
   * The same run over the in-JVM transport: a listener in front of the server's records each
   * connection, and a disconnect closes its server end (which closes the client's); the server's
   * two loops move resumed sessions between them.
   */
  @Test
  void overInJvm_everyInteraction_survivesFiftyDisconnects() throws Exception {
    String name = UriTransportSuite.localName();
    server =
        MillraceServer.builder()
            .listen("local://" + name)
            .config(config())
            .eventLoopThreads(2)
            .acceptor(
                (setup, connection) -> {
                  serverConnections.add(connection);
                  return responder;
                })
            .bind();
    InJvmServers.Listener real = InJvmServers.listener(name);
    List<InJvmTransport> open = new CopyOnWriteArrayList<>();
    String front = name + "-front";
    InJvmServers.Listener recording =
        new InJvmServers.Listener() {
          @Override
          public io.netty.util.concurrent.EventExecutor nextLoop() {
            return real.nextLoop();
          }

          @Override
          public io.netty.buffer.ByteBufAllocator alloc() {
            return real.alloc();
          }

          @Override
          public int maxFrameLength() {
            return real.maxFrameLength();
          }

          @Override
          public io.netty.channel.WriteBufferWaterMark waterMark() {
            return real.waterMark();
          }

          @Override
          public void accept(InJvmTransport transport) {
            open.add(transport);
            real.accept(transport);
          }
        };
    InJvmServers.bind(front, recording);
    try {
      client = MillraceClient.builder().config(config()).build();
      Connection c = client.connect("local://" + front).get(5, TimeUnit.SECONDS);
      survivesDisconnects(
          c,
          50,
          i -> {
            for (InJvmTransport t : open) {
              open.remove(t);
              t.close(); // closes the client's end too
            }
          },
          () -> {});
    } finally {
      InJvmServers.unbind(front, recording);
    }
  }

  /**
   * Runs a request-stream, a request-channel, request-response calls and fire-and-forgets on {@code
   * c} through {@code disconnects} calls of {@code disconnect} (each after some progress, each
   * followed by a resumption and then {@code afterResumed}), and checks that nothing was lost,
   * repeated or reordered.
   */
  private void survivesDisconnects(
      Connection c,
      int disconnects,
      java.util.function.IntConsumer disconnect,
      Runnable afterResumed)
      throws Exception {
    AtomicInteger resumed = new AtomicInteger();
    List<String> events = new CopyOnWriteArrayList<>();
    List<String> trail = new CopyOnWriteArrayList<>(); // the last few disconnects, for messages
    c.addListener(
        new ConnectionListener() {
          @Override
          public void onResumed(Connection connection) {
            resumed.incrementAndGet();
          }

          @Override
          public void onResumeRejected(Connection connection, String message) {
            events.add("rejected " + message);
          }

          @Override
          public void onClosed(Connection connection, CloseReason reason) {
            events.add("closed " + reason);
          }

          @Override
          public void onDisconnected(Connection connection, String reason) {
            recent(trail, "lost " + reason);
          }

          @Override
          public void onReconnecting(Connection connection, int attempt, long delayMillis) {
            recent(trail, "reconnecting " + attempt);
          }
        });
    int streamItems = 4_000;
    int channelItems = 2_000;
    int calls = 3_000;
    Checker stream = new Checker();
    Checker channel = new Checker();
    Producer upstream = new Producer(channelItems);
    AtomicIntegerArray answers = new AtomicIntegerArray(calls);
    AtomicInteger answered = new AtomicInteger();
    List<String> clientProblems = new CopyOnWriteArrayList<>();
    c.executor()
        .submit(
            () -> {
              c.requestStream(null, intBuf(c, streamItems), 4, listener(stream, null));
              Stream ch =
                  c.requestChannel(
                      null, intBuf(c, channelItems), 4, false, listener(channel, upstream));
              upstream.pump(ch);
            })
        .get(5, TimeUnit.SECONDS);
    // Calls and fire-and-forgets come from this thread, through the hand-off, a few at a time.
    Thread caller =
        new Thread(
            () -> {
              try {
                for (int i = 0; i < calls; i++) {
                  int n = i;
                  c.fireAndForget(null, intBuf(c, n));
                  c.requestResponse(
                      null,
                      intBuf(c, n),
                      new StreamListener() {
                        @Override
                        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
                          if (d.getInt(d.readerIndex()) != n) {
                            clientProblems.add("call " + n + " got another answer");
                          }
                          answers.incrementAndGet(n);
                          answered.incrementAndGet();
                        }

                        @Override
                        public void onError(Stream s, int code, String message) {
                          clientProblems.add("call " + n + " failed: " + message);
                        }
                      });
                  if (i % 30 == 29) {
                    try {
                      Thread.sleep(1);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                }
              } catch (RuntimeException e) { // reported, not left to the final wait's timeout
                clientProblems.add("the caller failed: " + e);
              }
            });
    caller.start();

    for (int i = 0; i < disconnects; i++) {
      int before = resumed.get();
      int progress = stream.received + channel.received + answered.get();
      // Let something pass on this connection first, unless everything is done.
      await(
          "progress before disconnect " + i,
          () ->
              stream.received + channel.received + answered.get() > progress
                  || stream.completed && channel.completed && answered.get() == calls,
          10_000);
      disconnect.accept(i);
      await("resumption " + i + " (" + events + trail + ")", () -> resumed.get() > before, 10_000);
      afterResumed.run();
    }
    await(
        () ->
            "everything: stream "
                + stream.received
                + (stream.completed ? " completed" : "")
                + ", channel "
                + channel.received
                + (channel.completed ? " completed" : "")
                + " upstream sent "
                + upstream.next
                + ", answered "
                + answered.get()
                + ", fnf "
                + fnfSeen.get()
                + ", client problems "
                + clientProblems
                + ", server problems "
                + serverProblems
                + ", active "
                + c.activeStreams()
                + " client "
                + onLoop(c, c::toString)
                + " server "
                + serverConnections.stream().map(sc -> onLoop(sc, sc::toString)).toList()
                + ", proxy "
                + proxy.describe(),
        () ->
            stream.completed
                    && channel.completed
                    && answered.get() == calls
                    && fnfSeen.get() == calls
                || stream.error != null
                || channel.error != null,
        30_000);
    caller.join(5_000);
    assertThat(events).isEmpty();
    assertThat(stream.error).isNull();
    assertThat(channel.error).isNull();
    assertThat(stream.problems).isEmpty();
    assertThat(channel.problems).isEmpty();
    assertThat(clientProblems).isEmpty();
    assertThat(serverProblems).isEmpty();
    assertThat(stream.received).isEqualTo(streamItems);
    assertThat(channel.received).isEqualTo(channelItems);
    for (int i = 0; i < calls; i++) {
      assertThat(answers.get(i)).as("answers to call %d", i).isEqualTo(1);
    }
    assertThat(fnfSeen).hasValue(calls);
    assertThat(resumed.get()).isGreaterThanOrEqualTo(disconnects);
    await("streams done", () -> c.activeStreams() == 0, 5_000);
  }

  private static StreamListener listener(Checker checker, Producer upstream) {
    return new StreamListener() {
      @Override
      public void onNext(Stream s, ByteBuf m, ByteBuf d) {
        checker.onNext(s, d);
      }

      @Override
      public void onComplete(Stream s) {
        checker.completed = true;
      }

      @Override
      public void onError(Stream s, int code, String message) {
        checker.error = code + " " + message;
      }

      @Override
      public void onReady(Stream s) {
        if (upstream != null) {
          upstream.pump(s);
        }
      }
    };
  }

  @Test
  void aServerThatForgotTheSession_rejectsTheResume_andTheClientsStreamsFail() throws Exception {
    Connection c = start(1);
    ConcurrentHashMap<String, String> seen = new ConcurrentHashMap<>();
    c.addListener(
        new ConnectionListener() {
          @Override
          public void onResumeRejected(Connection connection, String message) {
            seen.put("rejected", message);
          }

          @Override
          public void onClosed(Connection connection, CloseReason reason) {
            seen.put("closed", reason.kind().name());
          }
        });
    Checker stream = new Checker();
    c.executor()
        .submit(() -> c.requestStream(null, intBuf(c, 1_000_000), 1, listener(stream, null)))
        .get(5, TimeUnit.SECONDS);
    await("first item", () -> stream.received > 0, 5_000);
    // A new server on the same port: the proxy's target, without the session.
    int port = server.port();
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
    server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", port)
            .config(config())
            .acceptor((setup, connection) -> responder)
            .bind();
    await("closed", () -> seen.containsKey("closed"), 10_000);
    assertThat(seen).containsEntry("closed", "RESUME_REJECTED").containsKey("rejected");
    assertThat(stream.error).startsWith(ErrorCode.REJECTED_RESUME + " ");
    int accepted = proxy.accepted();
    Thread.sleep(300);
    assertThat(proxy.accepted()).as("a rejected session is not retried").isEqualTo(accepted);
  }
}
