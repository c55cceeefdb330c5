package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Reconnect;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.testing.ChaosProxy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reconnecting without resumption over real TCP: a server restarted on the same port, and a proxy
 * that resets connections, black-holes them until the keepalive notices, and refuses reconnects for
 * a while. Every request completes exactly once, with its answer or with a clear error, and none
 * hangs; Netty's paranoid leak detector fails the build on a leaked buffer.
 */
class TcpReconnectTest {
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

  static final Responder ECHO =
      new Responder() {
        @Override
        public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
          stream.nextAndComplete(null, data.retainedSlice());
          return null;
        }

        @Override
        public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
          // An endless stream, one item per credit: it ends with its connection.
          stream.next(null, Unpooled.wrappedBuffer(new byte[] {1}));
          return new StreamListener() {
            @Override
            public void onReady(Stream s) {
              while (s.credit() > 0 && s.isReady()) {
                s.next(null, Unpooled.wrappedBuffer(new byte[] {1}));
              }
            }
          };
        }
      };

  private MillraceServer startServer(int port) throws InterruptedException {
    return MillraceServer.builder()
        .bindAddress("127.0.0.1", port)
        .acceptor((setup, connection) -> ECHO)
        .bind();
  }

  private static ConnectionConfig clientConfig(Reconnect reconnect) {
    return ConnectionConfig.builder()
        .keepAlive(Duration.ofMillis(100), Duration.ofMillis(600))
        .reconnect(reconnect)
        .build();
  }

  private static Reconnect.Builder quick() {
    return Reconnect.builder().backoff(Duration.ofMillis(10), Duration.ofMillis(200));
  }

  /** Connection events, in order, as text. */
  static final class Events implements ConnectionListener {
    final List<String> seen = new CopyOnWriteArrayList<>();

    @Override
    public void onDisconnected(Connection connection, String reason) {
      seen.add("disconnected");
    }

    @Override
    public void onReconnected(Connection connection) {
      seen.add("reconnected");
    }

    @Override
    public void onClosed(Connection connection, CloseReason reason) {
      seen.add("closed " + reason.kind());
    }

    long count(String event) {
      return seen.stream().filter(event::equals).count();
    }
  }

  /** Calls made by {@link #call}, and the answers and errors their listeners heard. */
  private final AtomicInteger calls = new AtomicInteger();

  private final AtomicInteger outcomes = new AtomicInteger();

  /** One request-response from this thread: its answer, or "ERROR code message". */
  private String call(Connection connection, String text) throws Exception {
    calls.incrementAndGet();
    CompletableFuture<String> result = new CompletableFuture<>();
    connection.requestResponse(
        null,
        Unpooled.copiedBuffer(text, java.nio.charset.StandardCharsets.UTF_8),
        new StreamListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            outcomes.incrementAndGet();
            result.complete(data.toString(java.nio.charset.StandardCharsets.UTF_8));
          }

          @Override
          public void onError(Stream stream, int errorCode, String message) {
            outcomes.incrementAndGet();
            result.complete("ERROR " + ErrorCode.name(errorCode) + " " + message);
          }
        });
    return result.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aServerRestartedOnTheSamePortIsReconnectedToAndWaitingCallsGoThrough() throws Exception {
    server = startServer(0);
    int port = server.port();
    client = MillraceClient.builder().config(clientConfig(quick().build())).build();
    Connection connection = client.connect("127.0.0.1", port).get(5, TimeUnit.SECONDS);
    Events events = new Events();
    connection.addListener(events);
    assertThat(call(connection, "before")).isEqualTo("before");

    // A stream open while the server goes away at once fails with the connection's error. (A
    // graceful server shutdown, where new calls move to a new connection while old streams
    // finish, is CallReconnectTest's and ReconnectingConnectionTest's.)
    CompletableFuture<String> stream = new CompletableFuture<>();
    connection.requestStream(
        null,
        Unpooled.EMPTY_BUFFER,
        1,
        new StreamListener() {
          @Override
          public void onError(Stream s, int errorCode, String message) {
            stream.complete(ErrorCode.name(errorCode) + " " + message);
          }
        });

    server.shutdownNow();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(stream.get(5, TimeUnit.SECONDS)).startsWith("CONNECTION_ERROR");
    CompletableFuture<String> waited =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return call(connection, "during");
              } catch (Exception e) {
                return e.toString();
              }
            });
    Thread.sleep(300); // the client tries and is refused meanwhile
    assertThat(waited).isNotDone();
    server = startServer(port);

    assertThat(waited.get(10, TimeUnit.SECONDS)).isEqualTo("during");
    assertThat(call(connection, "after")).isEqualTo("after");
    assertThat(events.seen).containsSubsequence("disconnected", "reconnected");
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void throughResetsBlackHolesAndRefusalsEveryCallCompletesExactlyOnce() throws Exception {
    server = startServer(0);
    proxy = new ChaosProxy(new InetSocketAddress("127.0.0.1", server.port()));
    client = MillraceClient.builder().config(clientConfig(quick().build())).build();
    Connection connection = client.connect("127.0.0.1", proxy.port()).get(5, TimeUnit.SECONDS);
    Events events = new Events();
    connection.addListener(events);

    AtomicInteger answered = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicInteger neverSent = new AtomicInteger();
    List<String> problems = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> caller =
        CompletableFuture.runAsync(
            () -> {
              for (int i = 0; i < 100_000 && problems.isEmpty(); i++) {
                String text = "call " + i;
                try {
                  String result = call(connection, text);
                  if (result.equals(text)) {
                    answered.incrementAndGet();
                  } else if (result.startsWith("ERROR CONNECTION_ERROR")) {
                    failed.incrementAndGet(); // in flight when the connection broke
                  } else if (result.startsWith("ERROR REJECTED not sent")) {
                    neverSent.incrementAndGet(); // made as the connection broke
                  } else {
                    problems.add(text + " -> " + result);
                  }
                } catch (Exception e) {
                  problems.add(text + " -> " + e);
                }
                if (Thread.currentThread().isInterrupted() || stop) {
                  return;
                }
              }
            });

    int disconnects = 0;
    for (int round = 0; round < 12; round++) {
      long before = events.count("reconnected");
      int answeredBefore = answered.get();
      waitFor(() -> answered.get() > answeredBefore + 20);
      switch (round % 3) {
        case 0 -> proxy.reset();
        case 1 -> proxy.blackHole(); // only the keepalive timeout (600 ms) notices
        default -> {
          proxy.refuse(300); // the next attempts are refused for a while
          proxy.reset();
        }
      }
      disconnects++;
      waitFor(() -> events.count("reconnected") > before);
    }
    stop = true;
    caller.get(20, TimeUnit.SECONDS);

    assertThat(problems).isEmpty();
    Thread.sleep(200); // a second answer or error to any call would have come by now
    assertThat(outcomes.get()).as("one outcome per call").isEqualTo(calls.get());
    // A connection the proxy refuses is accepted and reset at once: to the client it is a
    // connection that broke right after SETUP, so it may count more than the forced breaks.
    waitFor(() -> events.count("reconnected") == events.count("disconnected"));
    long lost = events.count("disconnected");
    assertThat(lost).isGreaterThanOrEqualTo(disconnects);
    assertThat(events.count("reconnected")).isEqualTo(lost);
    assertThat(answered.get()).isGreaterThan(12 * 20);
    assertThat((long) failed.get())
        .as("at most the call in flight at each break")
        .isLessThanOrEqualTo(lost);
    assertThat(connection.isOpen()).isTrue();
  }

  private volatile boolean stop;

  /**
   * A client that reconnects and resumes opens its sessions from its event loop, where drawing a
   * resume token must not read the OS's entropy source (the suite's blocking detector watches).
   */
  @Test
  void aReconnectingResumingClientOpensItsSessionWithoutBlockingItsLoop() throws Exception {
    ConnectionConfig resuming = TcpResumptionTest.config();
    server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .config(resuming)
            .acceptor((setup, connection) -> ECHO)
            .bind();
    client =
        MillraceClient.builder()
            .config(resuming.toBuilder().reconnect(quick().build()).build())
            .build();
    Connection connection = client.connect("127.0.0.1", server.port()).get(5, TimeUnit.SECONDS);
    assertThat(call(connection, "resumable")).isEqualTo("resumable");
  }

  @Test
  void aClientShutDownWhileReconnectingClosesItsConnection() throws Exception {
    server = startServer(0);
    proxy = new ChaosProxy(new InetSocketAddress("127.0.0.1", server.port()));
    client = MillraceClient.builder().config(clientConfig(quick().build())).build();
    Connection connection = client.connect("127.0.0.1", proxy.port()).get(5, TimeUnit.SECONDS);
    proxy.refuse(60_000);
    proxy.reset();
    Thread.sleep(200);
    assertThat(connection.isOpen()).isTrue();

    client.shutdown();
    assertThat(client.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    CloseReason reason = connection.onClose().toCompletableFuture().get(1, TimeUnit.SECONDS);
    assertThat(reason.kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);
  }

  @Test
  void connectGivesUpWhenTheServerNeverComes() throws Exception {
    server = startServer(0);
    int port = server.port();
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
    server = null;
    client = MillraceClient.builder().config(clientConfig(quick().maxAttempts(4).build())).build();
    CompletableFuture<Connection> connecting = client.connect("127.0.0.1", port);
    assertThat(connecting)
        .failsWithin(10, TimeUnit.SECONDS)
        .withThrowableThat()
        .withMessageContaining("gave up after 4 attempts")
        .withMessageContaining("refused");
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out");
      }
      Thread.sleep(2);
    }
  }
}
