package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Acceptor;
import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Reconnect;
import io.millrace.core.Responder;
import io.millrace.core.SetupException;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Reconnecting without resumption, without sockets: the client's connections are in-memory pipes
 * the test cuts, refuses or lets a server close, on one test loop with a hand-driven clock. The
 * loop's tracking allocator fails a test that leaves a buffer unreleased.
 */
class ReconnectingConnectionTest {

  /** Echoes request-response data; streams {@code data.readInt()} items; counts fire-and-forget. */
  static final class Echo implements Responder {
    final List<String> fireAndForgets = new ArrayList<>();
    final List<String> pushes = new ArrayList<>();
    int requests;

    @Override
    public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
      fireAndForgets.add(data.toString(StandardCharsets.UTF_8));
    }

    @Override
    public void metadataPush(Connection connection, ByteBuf metadata) {
      pushes.add(metadata.toString(StandardCharsets.UTF_8));
    }

    @Override
    public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
      requests++;
      stream.next(null, data.retainedSlice());
      return null;
    }

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      requests++;
      ResumptionTest.Producer p = new ResumptionTest.Producer(data.readInt());
      p.pump(stream);
      return p;
    }

    @Override
    public StreamListener requestChannel(
        Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
      requests++;
      stream.request(Long.MAX_VALUE);
      stream.next(null, data.retainedSlice());
      if (inboundComplete) {
        stream.complete();
      }
      return new StreamListener() {
        @Override
        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
          s.next(null, d.retainedSlice());
        }

        @Override
        public void onComplete(Stream s) {
          s.complete();
        }
      };
    }
  }

  /** Records what a stream's listener hears. */
  static final class Recorder implements StreamListener {
    final List<String> items = new ArrayList<>();
    boolean completed;
    int errorCode;
    String error;
    Stream stream;

    @Override
    public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
      stream = s;
      items.add(data.toString(StandardCharsets.UTF_8));
    }

    @Override
    public void onComplete(Stream s) {
      stream = s;
      completed = true;
    }

    @Override
    public void onError(Stream s, int code, String message) {
      stream = s;
      errorCode = code;
      error = message;
    }

    boolean done() {
      return completed || error != null;
    }
  }

  /** Records connection events as text. */
  static final class Events implements ConnectionListener {
    final List<String> seen = new ArrayList<>();
    final List<Long> delays = new ArrayList<>();

    @Override
    public void onDisconnected(Connection connection, String reason) {
      seen.add("disconnected");
    }

    @Override
    public void onReconnecting(Connection connection, int attempt, long delayMillis) {
      seen.add("reconnecting " + attempt);
      delays.add(delayMillis);
    }

    @Override
    public void onReconnected(Connection connection) {
      seen.add("reconnected");
    }

    @Override
    public void onDraining(Connection connection, CloseReason reason) {
      seen.add("draining");
    }

    @Override
    public void onClosed(Connection connection, CloseReason reason) {
      seen.add("closed " + reason.kind());
    }
  }

  /** A reconnecting client whose connections are {@link MemoryPipe}s to fresh server engines. */
  static final class Net implements AutoCloseable {
    final TestLoop loop = new TestLoop();
    final ManualTimers timers = new ManualTimers();
    final ConnectionConfig clientConfig;
    final ConnectionConfig serverConfig;
    final Echo echo = new Echo();
    Acceptor acceptor = (setup, connection) -> echo;
    final List<MemoryPipe> pipes = new ArrayList<>();
    final List<ConnectionEngine> servers = new ArrayList<>();
    final List<String> setupData = new ArrayList<>();
    final ReconnectingConnection connection;
    final Events events = new Events();
    final CompletableFuture<Connection> first;
    boolean refuse;
    int refuseFirst;
    int attempts;

    /** While set, connections are made only when the test calls {@link #releaseHeld()}. */
    boolean hold;

    final List<Runnable> held = new ArrayList<>();

    Net(Reconnect reconnect) {
      this(
          ConnectionConfig.builder().reconnect(reconnect).maxQueuedCallBytes(64 * 1024).build(), 0);
    }

    /** A client whose first {@code refuseFirst} attempts are refused. */
    Net(ConnectionConfig clientConfig, int refuseFirst) {
      this(clientConfig, ConnectionConfig.builder().build(), refuseFirst);
    }

    Net(ConnectionConfig clientConfig, ConnectionConfig serverConfig, int refuseFirst) {
      this.clientConfig = clientConfig;
      this.serverConfig = serverConfig;
      this.refuseFirst = refuseFirst;
      ByteBuf setup = ByteBufUtil.writeUtf8(loop.alloc, "hello");
      connection =
          new ReconnectingConnection(
              loop.executor, loop.alloc, clientConfig, this::connect, null, setup, timers);
      connection.addListener(events);
      first = connection.start();
      loop.drain();
    }

    private CompletableFuture<Connection> connect(
        EventExecutor executor, ByteBuf metadata, ByteBuf data) {
      attempts++;
      if (refuse || refuseFirst-- > 0) {
        release(metadata);
        release(data);
        return CompletableFuture.failedFuture(new IOException("connection refused"));
      }
      if (hold) {
        CompletableFuture<Connection> later = new CompletableFuture<>();
        held.add(() -> later.complete(open(metadata, data)));
        return later;
      }
      return CompletableFuture.completedFuture(open(metadata, data));
    }

    /** Makes the connections that were held back. */
    void releaseHeld() {
      loop.run(
          () -> {
            List<Runnable> now = new ArrayList<>(held);
            held.clear();
            now.forEach(Runnable::run);
          });
      loop.drain();
    }

    private ConnectionEngine open(ByteBuf metadata, ByteBuf data) {
      setupData.add(data == null ? "" : data.toString(StandardCharsets.UTF_8));
      MemoryPipe pipe = new MemoryPipe(loop, 0);
      pipes.add(pipe);
      ConnectionEngine server =
          ConnectionEngine.server(pipe.serverEnd, serverConfig, acceptor, null, null, timers);
      pipe.serverEnd.setListener(server);
      servers.add(server);
      ConnectionEngine client =
          ConnectionEngine.client(pipe.clientEnd, clientConfig, Responder.REJECT_ALL, timers);
      pipe.clientEnd.setListener(client);
      server.start(null, null);
      client.start(metadata, data);
      return client;
    }

    MemoryPipe pipe() {
      return pipes.get(pipes.size() - 1);
    }

    void cut() {
      loop.run(() -> pipe().cut());
      loop.drain();
    }

    /** Runs the loop until quiet, then advances the clock, {@code rounds} times. */
    void settle(int rounds, long millis) {
      for (int i = 0; i < rounds; i++) {
        loop.drain();
        loop.run(() -> timers.advance(Duration.ofMillis(millis)));
      }
      loop.drain();
    }

    void until(BooleanSupplier done) {
      for (int i = 0; i < 2_000 && !loop.call(done::getAsBoolean); i++) {
        settle(1, 50);
      }
      assertThat(loop.call(done::getAsBoolean)).as("finished in time").isTrue();
    }

    <T> T onLoop(java.util.concurrent.Callable<T> task) {
      T result = loop.call(task);
      loop.drain();
      return result;
    }

    ByteBuf utf8(String s) {
      return ByteBufUtil.writeUtf8(loop.alloc, s);
    }

    ByteBuf count(int n) {
      return loop.alloc.buffer(4).writeInt(n);
    }

    @Override
    public void close() {
      loop.run(connection::dispose);
      settle(3, 100);
      assertThat(connection.isOpen()).isFalse();
      loop.close();
    }
  }

  private static Reconnect.Builder fast() {
    return Reconnect.builder().backoff(Duration.ofMillis(100), Duration.ofSeconds(2)).jitter(0);
  }

  @Test
  void aLostConnectionFailsItsStreamsAndTheNextRequestsGoToANewOne() {
    try (Net net = new Net(fast().build())) {
      assertThat(net.first).isCompletedWithValue(net.connection);
      Recorder open = new Recorder();
      net.onLoop(() -> net.connection.requestStream(null, net.count(1000), 1, open));
      assertThat(open.items).hasSize(1);

      net.settle(1, 2500); // up longer than the longest backoff: healthy
      net.cut();
      net.until(() -> net.pipes.size() == 2 && net.connection.isReadyForCalls());

      assertThat(open.errorCode).isEqualTo(ErrorCode.CONNECTION_ERROR);
      assertThat(open.error).contains("closed");
      assertThat(net.events.seen)
          .containsExactly("disconnected", "reconnecting 1", "reconnected")
          .as("the first attempt after a healthy connection goes at once");
      assertThat(net.events.delays).containsExactly(0L);
      assertThat(net.setupData).containsExactly("hello", "hello");

      Recorder after = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("again"), after));
      assertThat(after.items).containsExactly("again");
      assertThat(after.completed).isTrue();
      assertThat(net.servers.get(1).activeStreams()).isZero();
    }
  }

  @Test
  void requestsMadeWhileDisconnectedWaitAndGoOutInOrderOnTheNextConnection() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      assertThat(net.connection.isReadyForCalls()).isFalse();
      assertThat(net.connection.availability()).isZero();

      Recorder response = new Recorder();
      Recorder stream = new Recorder();
      Recorder channel = new Recorder();
      Stream[] streams = new Stream[3];
      net.onLoop(
          () -> {
            assertThat(net.connection.fireAndForget(null, net.utf8("f1"))).isTrue();
            streams[0] = net.connection.requestResponse(null, net.utf8("r1"), response);
            streams[1] = net.connection.requestStream(null, net.count(3), 1, stream);
            streams[2] = net.connection.requestChannel(null, net.utf8("c1"), 10, true, channel);
            net.connection.metadataPush(net.utf8("p1"));
            assertThat(net.connection.fireAndForget(null, net.utf8("f2"))).isTrue();
            // Credit asked for before the request goes out travels with it.
            streams[1].request(2);
            assertThat(streams[0].streamId()).isZero();
            assertThat(streams[0].isReady()).isFalse();
            return null;
          });
      net.settle(5, 100); // attempts refused meanwhile: nothing is sent, nothing fails
      assertThat(net.attempts).isGreaterThan(2);
      assertThat(response.done()).isFalse();

      net.refuse = false;
      net.until(() -> stream.completed && channel.completed && response.completed);

      assertThat(response.items).containsExactly("r1");
      assertThat(stream.items).hasSize(3);
      assertThat(channel.items).containsExactly("c1");
      assertThat(net.echo.fireAndForgets).containsExactly("f1", "f2");
      assertThat(net.echo.pushes).containsExactly("p1");
      assertThat(response.stream)
          .as("the listener sees the stream it was given")
          .isSameAs(streams[0]);
      assertThat(net.loop.call(() -> streams[0].streamId())).isPositive();
      assertThat(net.connection.isReadyForCalls()).isTrue();
    }
  }

  @Test
  void aWaitingRequestOnceSent_isCountedOnTheBudgetOfTheConnectionItWentOn() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      Recorder stream = new Recorder();
      Stream[] sent = new Stream[1];
      net.onLoop(
          () -> {
            sent[0] = net.connection.requestStream(null, net.count(3), 3, stream);
            return null;
          });
      assertThat(net.loop.call(() -> UnreadBudget.of(sent[0]))).as("not sent yet").isNull();
      net.refuse = false;
      net.until(() -> stream.completed);
      assertThat(net.loop.call(() -> UnreadBudget.of(sent[0].connection())))
          .as("the reconnecting connection has no budget of its own")
          .isNull();
      assertThat(net.loop.call(() -> UnreadBudget.of(sent[0])))
          .as("the connection it went on has")
          .isNotNull();
    }
  }

  @Test
  void aWaitingRequestFailsWithRejectedAfterTheMaximumWait() {
    try (Net net = new Net(fast().maxWait(Duration.ofSeconds(1)).build())) {
      net.refuse = true;
      net.cut();
      Recorder r = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("late"), r));
      net.settle(5, 100);
      assertThat(r.done()).isFalse();
      net.settle(8, 100);
      assertThat(r.errorCode).isEqualTo(ErrorCode.REJECTED);
      assertThat(r.error).contains("no connection within PT1S").contains("refused");

      net.refuse = false;
      net.until(() -> net.connection.isReadyForCalls());
      assertThat(net.echo.requests).as("the expired request was never sent").isZero();
    }
  }

  @Test
  void failFastRejectsAtOnceWhileDisconnected() {
    try (Net net =
        new Net(fast().whileDisconnected(Reconnect.WhileDisconnected.FAIL_FAST).build())) {
      net.refuse = true;
      net.cut();
      Recorder r = new Recorder();
      boolean sent =
          net.onLoop(
              () -> {
                net.connection.requestStream(null, net.count(3), 3, r);
                return net.connection.fireAndForget(null, net.utf8("lost"));
              });
      assertThat(sent).isFalse();
      assertThat(r.errorCode).isEqualTo(ErrorCode.REJECTED);
      assertThat(r.error).startsWith("not sent: no connection").endsWith("reconnecting");

      net.refuse = false;
      net.until(() -> net.connection.isReadyForCalls());
      assertThat(net.echo.requests).isZero();
      assertThat(net.echo.fireAndForgets).isEmpty();
    }
  }

  @Test
  void waitingRequestsAreBoundedInBytes() {
    try (Net net = new Net(fast().build())) { // 64 KiB for calls waiting
      net.refuse = true;
      net.cut();
      List<Recorder> recorders = new ArrayList<>();
      net.onLoop(
          () -> {
            for (int i = 0; i < 20; i++) {
              Recorder r = new Recorder();
              recorders.add(r);
              ByteBuf data = net.loop.alloc.buffer(8192).writeZero(8192);
              net.connection.requestResponse(null, data, r);
            }
            return null;
          });
      long rejected = recorders.stream().filter(r -> r.errorCode == ErrorCode.REJECTED).count();
      assertThat(rejected).isEqualTo(13); // 7 fit: 7 * (8192 + 64) <= 65536 < 8 * (8192 + 64)
      assertThat(recorders.get(19).error).contains("too many requests are waiting");

      // From another thread the bound throws, as the connection's own hand-off does.
      ByteBuf big = net.loop.alloc.buffer(60_000).writeZero(60_000);
      assertThatThrownBy(() -> net.connection.requestResponse(null, big, new Recorder()))
          .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
      assertThat(big.refCnt()).isZero();

      net.refuse = false;
      net.until(() -> recorders.stream().allMatch(Recorder::done));
      assertThat(recorders.stream().filter(r -> r.completed).count()).isEqualTo(7);
    }
  }

  @Test
  void aWaitingChannelCompletedGoesOutCompleteAndOneFailedNeverGoesOut() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      Recorder completed = new Recorder();
      Recorder failed = new Recorder();
      net.onLoop(
          () -> {
            Stream c = net.connection.requestChannel(null, net.utf8("c1"), 10, false, completed);
            c.complete(); // its payloads ended while it waited: no throw, it goes out complete
            Stream f = net.connection.requestChannel(null, net.utf8("f1"), 10, false, failed);
            f.fail(new IllegalStateException("the payloads failed"));
            return null;
          });
      assertThat(failed.errorCode).isEqualTo(ErrorCode.CANCELED);
      assertThat(failed.error).contains("the payloads failed");
      net.refuse = false;
      net.until(() -> completed.completed);
      assertThat(completed.items).containsExactly("c1");
      assertThat(net.echo.requests).as("only the completed channel was sent").isEqualTo(1);
    }
  }

  @Test
  void aWaitingRequestCancelledIsNeverSent() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      Recorder r = new Recorder();
      net.onLoop(
          () -> {
            Stream s = net.connection.requestStream(null, net.count(5), 5, r);
            s.cancel();
            assertThat(s.isCancelled()).isTrue();
            assertThatThrownBy(() -> s.next(null, net.utf8("x")))
                .isInstanceOf(IllegalStateException.class);
            return null;
          });
      net.refuse = false;
      net.until(() -> net.connection.isReadyForCalls());
      net.settle(3, 100);
      assertThat(net.echo.requests).isZero();
      assertThat(r.done()).as("a cancelled request hears nothing more").isFalse();
    }
  }

  @Test
  void backoffDoublesUpToItsMaximumAndGivingUpClosesWithTheReason() {
    try (Net net = new Net(fast().maxAttempts(6).build())) {
      net.refuse = true;
      Recorder waiting = new Recorder();
      net.settle(1, 2500);
      net.cut();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("w"), waiting));
      net.settle(200, 50);

      assertThat(net.attempts).isEqualTo(1 + 6); // the first connection, then six attempts
      assertThat(net.events.delays).containsExactly(0L, 100L, 200L, 400L, 800L, 1600L);
      assertThat(net.connection.isOpen()).isFalse();
      CloseReason reason = net.connection.onClose().toCompletableFuture().join();
      assertThat(reason.kind()).isEqualTo(CloseReason.Kind.RECONNECT_FAILED);
      assertThat(reason.message()).contains("gave up after 6 attempts").contains("refused");
      assertThat(waiting.errorCode).as("never sent").isEqualTo(ErrorCode.REJECTED);
      assertThat(waiting.error).contains("gave up");
      assertThat(net.events.seen).endsWith("closed RECONNECT_FAILED");
    }
  }

  @Test
  void aConnectionThatBreaksSoonKeepsBackingOffInsteadOfHammeringTheServer() {
    try (Net net = new Net(fast().build())) {
      net.settle(1, 2500);
      net.cut(); // healthy before: at once
      net.until(() -> net.pipes.size() == 2);
      net.cut(); // up for less than the maximum backoff: the next delay grows
      net.until(() -> net.pipes.size() == 3);
      net.cut();
      net.until(() -> net.pipes.size() == 4);
      assertThat(net.events.delays).containsExactly(0L, 100L, 200L);
    }
  }

  @Test
  void theFirstConnectRetriesUntilTheServerIsUp() {
    ConnectionConfig config =
        ConnectionConfig.builder().reconnect(fast().maxAttempts(10).build()).build();
    try (Net net = new Net(config, 2)) {
      assertThat(net.first).isNotDone();
      net.until(() -> net.first.isDone());
      assertThat(net.first).isCompletedWithValue(net.connection);
      assertThat(net.attempts).isEqualTo(3);
      assertThat(net.events.delays).containsExactly(100L, 200L);
    }
  }

  @Test
  void theFirstConnectFailsOnceItsAttemptsAreSpent() {
    ConnectionConfig config =
        ConnectionConfig.builder().reconnect(fast().maxAttempts(3).build()).build();
    try (Net net = new Net(config, 100)) {
      net.settle(40, 100);
      assertThat(net.attempts).isEqualTo(3);
      assertThat(net.first).isCompletedExceptionally();
      assertThatThrownBy(net.first::join).hasMessageContaining("gave up after 3 attempts");
    }
  }

  @Test
  void aRejectedSetupIsNotRetried() {
    try (Net net = new Net(fast().build())) {
      net.acceptor =
          (setup, connection) -> {
            throw new SetupException(ErrorCode.REJECTED_SETUP, "not you");
          };
      net.cut();
      net.settle(20, 100);
      assertThat(net.attempts).isEqualTo(2);
      CloseReason reason = net.connection.onClose().toCompletableFuture().join();
      assertThat(reason.kind()).isEqualTo(CloseReason.Kind.ERROR_FROM_PEER);
      assertThat(reason.errorCode()).isEqualTo(ErrorCode.REJECTED_SETUP);
      assertThat(reason.message()).isEqualTo("not you");
    }
  }

  @Test
  void aServerClosingGracefullyLetsOpenStreamsFinishWhileNewRequestsGoToANewConnection() {
    try (Net net = new Net(fast().build())) {
      Recorder old = new Recorder();
      Stream oldStream = net.onLoop(() -> net.connection.requestStream(null, net.count(4), 1, old));
      assertThat(old.items).hasSize(1);

      net.settle(1, 2500);
      net.onLoop(
          () -> {
            net.servers.get(0).close();
            return null;
          });
      net.until(() -> net.pipes.size() == 2 && net.connection.isReadyForCalls());
      assertThat(old.done())
          .as("the old stream is still open on the draining connection")
          .isFalse();

      Recorder fresh = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("new"), fresh));
      assertThat(fresh.items).containsExactly("new");
      assertThat(net.servers.get(1).activeStreams()).isZero();

      net.onLoop(
          () -> {
            oldStream.request(10);
            return null;
          });
      net.until(() -> old.completed);
      assertThat(old.items).hasSize(4);
      net.settle(3, 100);
      assertThat(net.servers.get(0).isOpen()).isFalse();
      assertThat(net.events.seen).startsWith("disconnected", "reconnecting 1", "reconnected");
    }
  }

  @Test
  void closingWhileDisconnectedStopsReconnectingAndFailsWaitingRequests() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      Recorder r = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("w"), r));
      int attemptsBefore = net.attempts;
      net.onLoop(
          () -> {
            net.connection.close();
            return null;
          });
      net.settle(50, 100);
      assertThat(net.attempts).isEqualTo(attemptsBefore);
      assertThat(r.errorCode).isEqualTo(ErrorCode.REJECTED);
      assertThat(r.error).contains("closing");
      CloseReason reason = net.connection.onClose().toCompletableFuture().join();
      assertThat(reason.kind()).isEqualTo(CloseReason.Kind.CLOSED_BY_THIS_SIDE);

      Recorder after = new Recorder();
      boolean fnf =
          net.onLoop(
              () -> {
                net.connection.requestResponse(null, net.utf8("x"), after);
                return net.connection.fireAndForget(null, net.utf8("y"));
              });
      assertThat(fnf).isFalse();
      assertThat(after.error).contains("closed");
    }
  }

  @Test
  void closingWhileConnectedDrainsTheConnection() {
    try (Net net = new Net(fast().build())) {
      Recorder r = new Recorder();
      Stream s = net.onLoop(() -> net.connection.requestStream(null, net.count(3), 1, r));
      net.onLoop(
          () -> {
            net.connection.close();
            return null;
          });
      assertThat(net.connection.isDraining()).isTrue();
      assertThat(net.connection.isOpen()).isTrue();
      net.onLoop(
          () -> {
            s.request(5);
            return null;
          });
      net.until(() -> !net.connection.isOpen());
      assertThat(r.completed).isTrue();
      assertThat(r.items).hasSize(3);
      assertThat(net.pipes).hasSize(1);
      assertThat(net.events.seen).containsExactly("draining", "closed CLOSED_BY_THIS_SIDE");
    }
  }

  private static void release(ByteBuf buf) {
    if (buf != null) {
      buf.release();
    }
  }

  @Test
  void aNonPositiveRequestNIsRefusedAtTheCallEvenWhileDisconnected() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      ByteBuf data = net.utf8("x");
      assertThatThrownBy(() -> net.connection.requestStream(null, data, 0, new Recorder()))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(data.refCnt()).isZero();
      net.refuse = false;
      Recorder after = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("after"), after));
      net.until(() -> after.completed);
    }
  }

  @Test
  void anUnusableWaitingCallFailsAloneAndTheOthersGo() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      Recorder bad = new Recorder();
      Recorder good = new Recorder();
      net.onLoop(
          () -> {
            ByteBuf released = net.utf8("gone");
            net.connection.requestResponse(null, released, bad);
            released.release(); // the application broke ownership: the buffer is dead when sent
            net.connection.requestResponse(null, net.utf8("ok"), good);
            return null;
          });
      net.refuse = false;
      net.until(() -> good.completed);
      assertThat(bad.errorCode).isEqualTo(ErrorCode.INVALID);
      assertThat(good.items).containsExactly("ok");
    }
  }

  @Test
  void aRequestMadeWhenReconnectedGoesAfterTheOnesThatWaited() {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      List<String> order = new ArrayList<>();
      Recorder waited = new Recorder();
      Recorder fromListener = new Recorder();
      net.connection.addListener(
          new ConnectionListener() {
            @Override
            public void onReconnected(Connection c) {
              c.fireAndForget(null, net.utf8("from listener"));
              c.requestResponse(null, net.utf8("from listener"), fromListener);
            }
          });
      net.onLoop(
          () -> {
            net.connection.fireAndForget(null, net.utf8("waited"));
            net.connection.requestResponse(null, net.utf8("waited"), waited);
            return null;
          });
      net.refuse = false;
      net.until(() -> waited.completed && fromListener.completed);
      assertThat(net.echo.fireAndForgets).containsExactly("waited", "from listener");
      order.add(net.loop.call(() -> String.valueOf(waited.stream.streamId())));
      order.add(net.loop.call(() -> String.valueOf(fromListener.stream.streamId())));
      assertThat(Integer.parseInt(order.get(0))).isLessThan(Integer.parseInt(order.get(1)));
    }
  }

  @Test
  void withLeasesWaitingCallsGoOnceTheServerGrantsOne() {
    ConnectionConfig client =
        ConnectionConfig.builder().lease(true).reconnect(fast().build()).build();
    ConnectionConfig server =
        ConnectionConfig.builder()
            .leaseIssuer(io.millrace.core.LeaseIssuer.fixed(60_000, 100))
            .build();
    try (Net net = new Net(client, server, 0)) {
      net.settle(1, 2500);
      net.refuse = true;
      net.cut();
      Recorder r = new Recorder();
      net.onLoop(() -> net.connection.requestResponse(null, net.utf8("leased"), r));
      net.refuse = false;
      net.until(() -> r.done());
      assertThat(r.items).as(String.valueOf(r.error)).containsExactly("leased");
    }
  }

  @Test
  void disposingWhileAConnectionIsBeingMadeClosesAtOnce() {
    try (Net net = new Net(fast().build())) {
      net.settle(1, 2500);
      net.hold = true;
      net.cut();
      assertThat(net.held).hasSize(1);
      net.onLoop(
          () -> {
            net.connection.dispose();
            return null;
          });
      assertThat(net.connection.isOpen()).isFalse();
      assertThat(net.connection.onClose().toCompletableFuture().join().kind())
          .isEqualTo(CloseReason.Kind.DISPOSED);
      net.releaseHeld(); // the late connection is disposed
      net.settle(2, 100);
      assertThat(net.servers.get(1).isOpen()).isFalse();
      assertThat(net.attempts).isEqualTo(2);
    }
  }

  @Test
  void closingWhileAConnectionIsBeingMadeClosesTheLateOneGracefully() {
    try (Net net = new Net(fast().build())) {
      net.settle(1, 2500);
      net.hold = true;
      net.cut();
      net.onLoop(
          () -> {
            net.connection.close();
            return null;
          });
      assertThat(net.connection.isOpen()).isFalse();
      net.releaseHeld();
      net.settle(5, 100);
      assertThat(net.servers.get(1).isOpen()).isFalse();
      assertThat(net.attempts).isEqualTo(2);
    }
  }

  @Test
  void closeForShutdownDrainsOnceAndASecondCloseForcesIt() {
    try (Net net = new Net(fast().build())) {
      Recorder r = new Recorder();
      Stream s = net.onLoop(() -> net.connection.requestStream(null, net.count(3), 1, r));
      net.onLoop(
          () -> {
            net.connection.closeForShutdown();
            net.connection.closeForShutdown(); // not a second close
            return null;
          });
      assertThat(net.connection.isDraining()).isTrue();
      assertThat(net.connection.isOpen()).isTrue();
      net.onLoop(
          () -> {
            net.connection.close(); // a second close forces it
            return null;
          });
      net.settle(2, 100);
      assertThat(net.connection.isOpen()).isFalse();
      assertThat(r.errorCode).isEqualTo(ErrorCode.CANCELED);
      assertThat(s.isInboundDone()).isTrue();
    }
  }

  @Test
  void closingTheUnderlyingConnectionClosesThisOne() {
    try (Net net = new Net(fast().build())) {
      Recorder r = new Recorder();
      Stream s = net.onLoop(() -> net.connection.requestResponse(null, net.utf8("x"), r));
      assertThat(r.completed).isTrue();
      net.onLoop(
          () -> {
            s.connection().close(); // the stream's connection is the underlying one
            return null;
          });
      net.settle(3, 100);
      assertThat(net.connection.isOpen()).isFalse();
      assertThat(net.pipes).hasSize(1);
      assertThat(net.events.seen).containsExactly("draining", "closed CLOSED_BY_THIS_SIDE");
    }
  }

  @Test
  void awaitReadyForCallsWaitsForTheNextConnectionAndReturnsFalseOnceClosed() throws Exception {
    try (Net net = new Net(fast().build())) {
      net.refuse = true;
      net.cut();
      CompletableFuture<Boolean> ready =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return net.connection.awaitReadyForCalls(Duration.ofSeconds(10));
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      Thread.sleep(50);
      assertThat(ready).isNotDone();
      net.refuse = false;
      net.until(() -> ready.isDone());
      assertThat(ready.join()).isTrue();

      net.onLoop(
          () -> {
            net.connection.close();
            return null;
          });
      long start = System.nanoTime();
      assertThat(net.connection.awaitReadyForCalls(Duration.ofSeconds(10))).isFalse();
      assertThat(System.nanoTime() - start)
          .isLessThan(java.util.concurrent.TimeUnit.SECONDS.toNanos(2));
    }
  }
}
