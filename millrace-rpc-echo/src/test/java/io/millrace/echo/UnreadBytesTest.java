package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceFutures;
import io.millrace.rpc.MessageIterator;
import io.millrace.rpc.ResponseSink;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What waits for blocking readers on one connection, on all its calls together, is held to the
 * connection's limit ({@link ConnectionConfig#maxUnreadBytes()}): on a server, the requests of
 * blocking handlers; on a client, the responses of blocking calls. A call whose message would pass
 * it fails with RESOURCE_EXHAUSTED, the others go on, and what readers take or drop frees room.
 */
class UnreadBytesTest {
  /**
   * Three messages of 64 KiB wait (each also counts 64 bytes: about 192 KiB) and a fourth fits; a
   * fifth would pass 300 KiB.
   */
  private static final ConnectionConfig SMALL =
      ConnectionConfig.builder().maxUnreadBytes(300 << 10).build();

  private static final ByteString CHUNK = ByteString.copyFrom(new byte[64 << 10]);

  /** What one request or reply of {@link #CHUNK} counts: its serialized size and the overhead. */
  private static final long COUNTED =
      EchoRequest.newBuilder().setPayload(CHUNK).build().getSerializedSize()
          + UnreadBudget.MESSAGE_OVERHEAD;

  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final ExecutorService callers = Executors.newCachedThreadPool();

  /** Handlers wait for it, then {@link #holdMillis}, before they read their requests. */
  private volatile CountDownLatch gate = new CountDownLatch(1);

  private volatile long holdMillis;

  private final AtomicInteger chatSent = new AtomicInteger();
  private RpcOverTcp tcp;

  private final EchoServiceFutures.Service service =
      new EchoServiceFutures.Service() {
        @Override
        public EchoReply echo(EchoRequest request, ServerContext context) {
          return EchoReply.newBuilder().setPayload(request.getPayload()).build();
        }

        @Override
        public void count(
            CountRequest request, ServerContext context, ResponseSink<EchoReply> responses) {}

        /** Reads all, or only the first when it asks to fail (the rest dropped unread). */
        @Override
        public EchoReply collect(MessageIterator<EchoRequest> requests, ServerContext context) {
          waitForTheGate();
          if (requests.next().getFailWithStatus() != 0) {
            return EchoReply.newBuilder().setSequence(-1).build();
          }
          long n = 1;
          while (requests.hasNext()) {
            requests.next();
            n++;
          }
          return EchoReply.newBuilder().setSequence(n).build();
        }

        @Override
        public void chat(
            MessageIterator<EchoRequest> requests,
            ServerContext context,
            ResponseSink<EchoReply> responses) {
          while (requests.hasNext()) {
            responses.send(EchoReply.newBuilder().setPayload(requests.next().getPayload()).build());
            chatSent.incrementAndGet();
          }
        }

        @Override
        public void notify(EchoRequest request, ServerContext context) {}
      };

  @AfterEach
  void stop() {
    gate.countDown();
    if (tcp != null) {
      tcp.close();
    }
    handlers.shutdownNow();
    callers.shutdownNow();
  }

  private void waitForTheGate() {
    try {
      gate.await();
      Thread.sleep(holdMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withMessage("interrupted").asException();
    }
  }

  private static List<EchoRequest> three(int failWith) {
    EchoRequest r = EchoRequest.newBuilder().setPayload(CHUNK).setFailWithStatus(failWith).build();
    return List.of(r, r, r);
  }

  @Test
  void aServersBlockingHandlers_togetherPastTheLimit_failTheCallThatPassesIt_andRoomComesBack()
      throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceFutures.bind(service, handlers)).build(), SMALL);
    EchoServiceFutures.Client echo = new EchoServiceFutures.Client(tcp.client());
    // A's three requests wait for its handler; B's first fits beside them, its second does not.
    for (int i = 0; i < 500 && tcp.accepted().isEmpty(); i++) {
      Thread.sleep(10); // (the server accepts the connection after the client has it)
    }
    Connection server = tcp.accepted().get(0);
    CompletableFuture<EchoReply> a =
        CompletableFuture.supplyAsync(() -> echo.collect(three(0)), callers);
    awaitUnread(server, 3 * COUNTED); // A's three wait
    CompletableFuture<EchoReply> b =
        CompletableFuture.supplyAsync(() -> echo.collect(three(0)), callers);
    awaitUnread(server, 4 * COUNTED); // one of B's fits beside them
    awaitRefusal(server); // the next does not
    gate.countDown();
    assertThat(a.get(10, TimeUnit.SECONDS).getSequence()).isEqualTo(3);
    assertThatThrownBy(() -> b.get(10, TimeUnit.SECONDS))
        .cause()
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.status().message()).contains("on its connection");
            });
    // Each later call's three wait before its handler reads: they fit only if neither what A's
    // handler read nor what a handler left unread (and its iterator dropped) is still counted.
    holdMillis = 300;
    for (int round = 0; round < 4; round++) {
      boolean dropsTwo = round % 2 == 0;
      EchoReply reply = echo.collect(three(dropsTwo ? 1 : 0));
      assertThat(reply.getSequence()).as("round %d", round).isEqualTo(dropsTwo ? -1 : 3);
    }
  }

  @Test
  void aBlockingHandlersOnlyRequest_waitingForTheHandler_isCounted() throws Exception {
    onlyRequestCountedWhileItWaits(false); // a native call: its requests come on the loop
  }

  @Test
  void aRoutedCallsFirstRequest_takenOnTheHandlersThread_isCountedToo() throws Exception {
    // A routed call (rsocket-java's, Spring's) carries its first message in the frame that opens
    // it, and the handler's iterator takes that one on the handler's thread, off the loop.
    onlyRequestCountedWhileItWaits(true);
  }

  /** One request to a blocked collect handler is counted on the server while it waits. */
  private void onlyRequestCountedWhileItWaits(boolean routed) throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceFutures.bind(service, handlers)).build(), SMALL);
    RpcClient client =
        routed
            ? RpcClient.routing(tcp.connect("message/x.rsocket.composite-metadata.v0"))
            : tcp.client();
    EchoServiceFutures.Client echo = new EchoServiceFutures.Client(client);
    for (int i = 0; i < 500 && tcp.accepted().isEmpty(); i++) {
      Thread.sleep(10);
    }
    EchoRequest one = EchoRequest.newBuilder().setPayload(CHUNK).build();
    CompletableFuture<EchoReply> call =
        CompletableFuture.supplyAsync(() -> echo.collect(List.of(one)), callers);
    awaitUnread(tcp.accepted().get(0), COUNTED); // its only request, waiting for the handler
    gate.countDown();
    assertThat(call.get(10, TimeUnit.SECONDS).getSequence()).isEqualTo(1);
  }

  @Test
  void aClientsBlockingReaders_togetherPastTheLimit_failTheCallThatPassesIt_andRoomComesBack()
      throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceFutures.bind(service, handlers)).build());
    RpcClient client = tcp.client(SMALL);
    EchoServiceFutures.Client echo = new EchoServiceFutures.Client(client);
    try (MessageIterator<EchoReply> a = echo.chat(three(0))) {
      awaitChatSent(3);
      try (MessageIterator<EchoReply> b = echo.chat(three(0))) {
        awaitRefusal(client.connection()); // B's second, before its reader takes the first
        assertThat(b.next().getPayload().size()).isEqualTo(64 << 10);
        assertThatThrownBy(b::hasNext)
            .isInstanceOfSatisfying(
                StatusException.class,
                e -> {
                  assertThat(e.status().code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                  assertThat(e.status().message()).contains("on its connection");
                });
      }
      int read = 0;
      while (a.hasNext()) {
        a.next();
        read++;
      }
      assertThat(read).isEqualTo(3);
    }
    for (int round = 0; round < 4; round++) {
      int before = chatSent.get();
      try (MessageIterator<EchoReply> c = echo.chat(three(0))) {
        awaitChatSent(before + 3);
        if (round % 2 == 0) {
          continue; // closed unread: what waits is dropped
        }
        int read = 0;
        while (c.hasNext()) {
          c.next();
          read++;
        }
        assertThat(read).as("round %d", round).isEqualTo(3);
      }
    }
    Connection connection = client.connection();
    long unread = unread(connection);
    assertThat(unread).as("nothing counted once nothing waits").isZero();
  }

  @Test
  void aReaderDroppedWithoutClosing_countsNothing_onceTheCollectorHasTakenIt() throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceFutures.bind(service, handlers)).build());
    RpcClient client = tcp.client(SMALL);
    EchoServiceFutures.Client echo = new EchoServiceFutures.Client(client);
    startChatAndDropIt(echo); // its three replies wait, and its call ends
    awaitChatSent(3);
    Connection connection = client.connection();
    UnreadBudget budget = UnreadBudget.of(connection);
    long counted = 0;
    for (int i = 0; i < 500 && counted < 3 * COUNTED; i++) {
      Thread.sleep(10);
      counted = connection.executor().submit(budget::charged).get(10, TimeUnit.SECONDS);
    }
    assertThat(counted).as("counted while they wait").isEqualTo(3 * COUNTED);
    long unread = -1;
    for (int i = 0; i < 100 && unread != 0; i++) {
      System.gc();
      Thread.sleep(50);
      unread = unread(connection);
    }
    assertThat(unread).as("what its dropped reader held is not counted for good").isZero();
  }

  /** A chat whose replies nobody reads, its iterator neither closed nor kept. */
  private static void startChatAndDropIt(EchoServiceFutures.Client echo) {
    MessageIterator<EchoReply> dropped = echo.chat(three(0));
    assertThat(dropped).isNotNull();
  }

  /** Waits until {@code connection} counts at least {@code bytes} waiting for readers. */
  private static void awaitUnread(Connection connection, long bytes) throws Exception {
    long unread = -1;
    for (int i = 0; i < 500 && unread < bytes; i++) {
      Thread.sleep(10);
      unread = unread(connection);
    }
    assertThat(unread).isGreaterThanOrEqualTo(bytes);
  }

  /** Waits until {@code connection}'s budget has refused a message. */
  static void awaitRefusal(Connection connection) throws Exception {
    UnreadBudget budget = UnreadBudget.of(connection);
    long refused = 0;
    for (int i = 0; i < 500 && refused == 0; i++) {
      Thread.sleep(10);
      refused = connection.executor().submit(budget::refusals).get(10, TimeUnit.SECONDS);
    }
    assertThat(refused).as("refused").isPositive();
  }

  /** What {@code connection} counts as waiting for readers, read again on its loop. */
  private static long unread(Connection connection) throws Exception {
    return connection
        .executor()
        .submit(() -> UnreadBudget.of(connection).recount())
        .get(10, TimeUnit.SECONDS);
  }

  /**
   * Waits until the server's chat handlers have sent {@code count} replies in all, and a little.
   */
  private void awaitChatSent(int count) throws InterruptedException {
    for (int i = 0; i < 500 && chatSent.get() < count; i++) {
      Thread.sleep(10);
    }
    assertThat(chatSent.get()).isGreaterThanOrEqualTo(count);
    Thread.sleep(200); // (sent: on its way; then read and queued on the client)
  }
}
