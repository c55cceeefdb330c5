package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.futures.BlockingRequester;
import io.millrace.futures.BlockingStream;
import io.millrace.futures.FutureHandler;
import io.millrace.futures.FutureRequester;
import io.millrace.futures.FutureResponder;
import io.millrace.futures.internal.BlockingIterator;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.ReadAhead;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;

/**
 * The CompletableFuture and blocking flavour against a Reactor responder with the suite's {@link
 * Behaviour}, and its FutureHandler answering a Reactor requester.
 */
class FuturesAndBlockingTest {
  private final Probe probe = new Probe();
  private Server server;
  private MillraceClient client;
  private Connection connection;

  private Connection connect(io.millrace.core.Responder responder) throws Exception {
    return connect(responder, Server.CONFIG);
  }

  /** Connects with {@code config} on the client's side. */
  private Connection connect(io.millrace.core.Responder responder, ConnectionConfig config)
      throws Exception {
    server = Server.millrace(responder);
    client = MillraceClient.builder().config(config).eventLoopThreads(1).build();
    connection = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    return connection;
  }

  private Connection echo() throws Exception {
    return connect(ReactorResponder.of(new ReactorEcho(probe)));
  }

  @AfterEach
  void close() throws InterruptedException {
    if (client != null) {
      client.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void futuresCompleteWithTheAnswerAnEmptyAnswerOrTheError() throws Exception {
    FutureRequester r = FutureRequester.of(echo());
    Payload p = r.requestResponse(Payload.of("m", "hello")).get(10, TimeUnit.SECONDS);
    assertThat(p.dataUtf8()).isEqualTo("hello");
    assertThat(p.metadataUtf8()).isEqualTo("m");
    assertThat(r.requestResponse(Payload.of(EMPTY)).get(10, TimeUnit.SECONDS)).isNull();
    assertThatThrownBy(() -> r.requestResponse(Payload.of(CODE)).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(
            StreamErrorException.class, e -> assertThat(e.errorCode()).isEqualTo(USER_CODE));
    r.fireAndForget(Payload.of("f")).get(10, TimeUnit.SECONDS);
    assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo("f");
  }

  @Test
  void aBlockingSenderWaitsForRoomInsteadOfBeingRefused() throws Exception {
    server = Server.millrace(ReactorResponder.of(new ReactorEcho(probe)));
    // A hand-off of 8 KiB: without waiting, a loop of 1000-byte sends is refused within a few.
    client =
        MillraceClient.builder()
            .config(Server.CONFIG.toBuilder().maxQueuedCallBytes(8 * 1024).build())
            .eventLoopThreads(1)
            .build();
    Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    BlockingRequester r = BlockingRequester.of(c);
    String body = "x".repeat(1000);
    int n = 5000;
    Thread sender =
        new Thread(
            () -> {
              for (int i = 0; i < n; i++) {
                r.fireAndForget(Payload.of(body));
              }
            });
    AtomicReference<Throwable> failed = new AtomicReference<>();
    sender.setUncaughtExceptionHandler((t, e) -> failed.set(e));
    sender.start();
    sender.join(30_000);
    assertThat(failed.get()).isNull();
    assertThat(sender.isAlive()).isFalse();
    for (int i = 0; i < n; i++) {
      assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo(body);
    }
  }

  @Test
  void cancellingAFutureCancelsTheCall() throws Exception {
    FutureRequester r = FutureRequester.of(echo());
    CompletableFuture<Payload> never = r.requestResponse(Payload.of(NEVER));
    Thread.sleep(100); // the request reaches the responder
    assertThat(never.cancel(false)).isTrue();
    assertThat(probe.awaitAnswerCancelled()).isTrue();
  }

  @Test
  void aFutureThatTimesOutCancelsTheCall() throws Exception {
    FutureRequester r = FutureRequester.of(echo());
    CompletableFuture<Payload> never =
        r.requestResponse(Payload.of(NEVER)).orTimeout(200, TimeUnit.MILLISECONDS);
    assertThatThrownBy(() -> never.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
    assertThat(probe.awaitAnswerCancelled()).as("the timeout cancelled the call").isTrue();
  }

  @Test
  void closingABlockingStreamFromAnotherThreadWakesItsReader() throws Exception {
    BlockingRequester r = BlockingRequester.of(echo());
    BlockingStream s = r.requestStream(Payload.of(NEVER)); // a stream that sends nothing
    CompletableFuture<Boolean> read = CompletableFuture.supplyAsync(s::hasNext);
    Thread.sleep(200);
    assertThat(read).as("the reader waits").isNotDone();
    s.close();
    assertThat(read.get(10, TimeUnit.SECONDS)).as("the reader woke and saw the end").isFalse();
    assertThat(probe.awaitCancelled()).as("closing cancelled the stream").isTrue();
  }

  @Test
  void aBlockingStreamWhosePayloadsOutgrowTheirCredit_isCancelledPastTheLimitOfBytesWaiting()
      throws Exception {
    // 5,000 small payloads read fast, so the reader asks 4,096 ahead; then 1 MiB ones, which the
    // reader does not read for a while: past 64 MiB waiting the stream is cancelled, and the reader
    // gets what waited, then the error.
    CountDownLatch serverCancelled = new CountDownLatch(1);
    byte[] mebibyte = new byte[1 << 20];
    int small = 5_000;
    BlockingRequester r =
        streaming(
            Flux.range(0, 100_000)
                .map(
                    i ->
                        i < small
                            ? Payload.of("small")
                            : Payload.of(Unpooled.wrappedBuffer(mebibyte)))
                .doOnCancel(serverCancelled::countDown));
    try (BlockingStream s = r.requestStream(Payload.of("x"))) {
      for (int i = 0; i < small; i++) {
        assertThat(s.next().dataUtf8()).isEqualTo("small");
      }
      assertThat(serverCancelled.await(10, TimeUnit.SECONDS)).as("cancelled, unread").isTrue();
      int large = 0;
      try {
        while (s.hasNext()) {
          assertThat(s.next().data().readableBytes()).isEqualTo(1 << 20);
          large++;
        }
        throw new AssertionError("the stream ended without an error after " + large);
      } catch (io.millrace.streams.BacklogExceededException e) {
        assertThat(large).as("what waited, read before the error").isBetween(1, 64);
      }
    }
  }

  @Test
  void aSlowBlockingReaderOfLargePayloads_getsEveryOne_noneCancelled() throws Exception {
    // 3 MiB payloads: the first request, made before their size was known, asked for 32 (96 MiB
    // that wait, past the stream's 64 MiB limit, by the reader's own request, and past the
    // connection's default: this one allows 128 MiB); then 9 MiB ones, two asked for ahead of the
    // reader (18 MiB waiting, and a third coming).
    byte[] three = new byte[3 << 20];
    byte[] nine = new byte[9 << 20];
    BlockingRequester r =
        streaming(
            Flux.range(0, 50).map(i -> Payload.of(Unpooled.wrappedBuffer(i < 40 ? three : nine))),
            Server.CONFIG.toBuilder().maxUnreadBytes(128L << 20).build());
    int read = 0;
    try (BlockingStream s = r.requestStream(Payload.of("x"))) {
      Thread.sleep(1_000); // the first window comes while nothing is read
      while (s.hasNext()) {
        assertThat(s.next().data().readableBytes()).isEqualTo(read < 40 ? 3 << 20 : 9 << 20);
        read++;
        Thread.sleep(read < 40 ? 0 : 50); // slower than the network: the next ones wait
      }
    }
    assertThat(read).isEqualTo(50);
  }

  @Test
  void aFirstRequestOfLargePayloads_pastTheConnectionsLimit_isCancelledAfterWhatFits()
      throws Exception {
    // As above at the default limit of 64 MiB a connection: 21 of the 3 MiB payloads fit.
    CountDownLatch serverCancelled = new CountDownLatch(1);
    byte[] three = new byte[3 << 20];
    BlockingRequester r =
        streaming(
            Flux.range(0, 50)
                .map(i -> Payload.of(Unpooled.wrappedBuffer(three)))
                .doOnCancel(serverCancelled::countDown));
    try (BlockingStream s = r.requestStream(Payload.of("x"))) {
      assertThat(serverCancelled.await(10, TimeUnit.SECONDS)).as("cancelled, unread").isTrue();
      int read = 0;
      try {
        while (s.hasNext()) {
          s.next().release();
          read++;
        }
        throw new AssertionError("the stream ended without an error after " + read);
      } catch (io.millrace.streams.BacklogExceededException e) {
        assertThat(e).hasMessageContaining("on its connection");
        assertThat(read).as("what fitted in 64 MiB").isEqualTo(21);
      }
    }
  }

  @Test
  void blockingStreamsTogetherPastTheConnectionsLimit_cancelTheOneThatPassesIt_andRoomComesBack()
      throws Exception {
    // 260 KiB a connection; each stream sends three payloads of 64 KiB, all asked for at once. A's
    // wait unread; B's first fits, its second would pass the limit: B gets what fitted, then the
    // error. Once A has been read, and whether later streams are read or closed unread, their
    // payloads fit again: what readers took and what was dropped is not counted for good.
    byte[] chunk = new byte[64 << 10];
    java.util.concurrent.atomic.AtomicInteger sent =
        new java.util.concurrent.atomic.AtomicInteger();
    BlockingRequester r =
        streaming(
            Flux.range(0, 3)
                .map(i -> Payload.of(Unpooled.wrappedBuffer(chunk)))
                .doOnNext(p -> sent.incrementAndGet()),
            Server.CONFIG.toBuilder().maxUnreadBytes(260 << 10).build());
    try (BlockingStream a = r.requestStream(Payload.of("a"))) {
      awaitSent(sent, 3);
      try (BlockingStream b = r.requestStream(Payload.of("b"))) {
        awaitRefusal(); // B's second, before its reader takes the first
        assertThat(b.next().data().readableBytes()).isEqualTo(64 << 10);
        assertThatThrownBy(b::hasNext)
            .isInstanceOf(io.millrace.streams.BacklogExceededException.class)
            .hasMessageContaining("on its connection");
      }
      for (int i = 0; i < 3; i++) {
        a.next().release();
      }
      assertThat(a.hasNext()).isFalse();
    }
    for (int round = 0; round < 4; round++) {
      int before = sent.get();
      try (BlockingStream c = r.requestStream(Payload.of("c"))) {
        awaitSent(sent, before + 3);
        if (round % 2 == 0) {
          continue; // closed unread: what waits is dropped
        }
        for (int i = 0; i < 3; i++) {
          c.next().release();
        }
        assertThat(c.hasNext()).as("round %d", round).isFalse();
      }
    }
    long unread =
        connection
            .executor()
            .submit(() -> io.millrace.core.internal.UnreadBudget.of(connection).recount())
            .get(10, TimeUnit.SECONDS);
    assertThat(unread).as("nothing counted once nothing waits").isZero();
  }

  /** Waits until the client's connection has refused a payload for what waits on it. */
  private void awaitRefusal() throws Exception {
    var budget = io.millrace.core.internal.UnreadBudget.of(connection);
    long refused = 0;
    for (int i = 0; i < 500 && refused == 0; i++) {
      Thread.sleep(10);
      refused = connection.executor().submit(budget::refusals).get(10, TimeUnit.SECONDS);
    }
    assertThat(refused).as("refused").isPositive();
  }

  /**
   * Waits until the server has sent {@code count} payloads in all, and a little for them to come.
   */
  private static void awaitSent(java.util.concurrent.atomic.AtomicInteger sent, int count)
      throws InterruptedException {
    for (int i = 0; i < 500 && sent.get() < count; i++) {
      Thread.sleep(10);
    }
    assertThat(sent.get()).isGreaterThanOrEqualTo(count);
    Thread.sleep(200); // (sent: written to the socket; then read and queued on the client)
  }

  @Test
  void aHeaderThenLargeChunks_toASlowBlockingReader_allArrive() throws Exception {
    // The reader takes a small header at once: its window then doubles (to 64), so the 512 KiB
    // chunks asked for at the header's size are 32 MiB at most, not 4,096 of them (past the limit).
    byte[] chunk = new byte[512 << 10];
    java.util.concurrent.atomic.AtomicInteger sent =
        new java.util.concurrent.atomic.AtomicInteger();
    BlockingRequester r =
        streaming(
            Flux.range(0, 201)
                .doOnNext(i -> sent.incrementAndGet())
                .map(
                    i ->
                        i == 0 ? Payload.of("header") : Payload.of(Unpooled.wrappedBuffer(chunk))));
    int read = 0;
    try (BlockingStream s = r.requestStream(Payload.of("x"))) {
      assertThat(s.next().dataUtf8()).isEqualTo("header");
      // Then nothing for a while: what was asked for comes and waits (all of it, were the window
      // opened at once: the server then sends everything, which arrives while nothing reads).
      for (int i = 0; i < 300 && sent.get() < 201; i++) {
        Thread.sleep(10);
      }
      Thread.sleep(2_000);
      while (s.hasNext()) {
        assertThat(s.next().data().readableBytes()).isEqualTo(512 << 10);
        read++;
      }
    }
    assertThat(read).isEqualTo(200);
  }

  @Test
  void aBlockingReadersBacklog_theFirstRequestWhole_thenThreeOfTheLargestOr64MiB() {
    AtomicBoolean cancelled = new AtomicBoolean();
    BlockingIterator stream = subscribedIterator(cancelled);
    byte[] three = new byte[3 << 20];
    for (int i = 0; i < ReadAhead.FIRST_REQUEST; i++) { // 96 MiB, as the first request asked
      stream.onNext(Payload.of(Unpooled.wrappedBuffer(three)));
    }
    assertThat(cancelled).as("the first request's, whatever their size").isFalse();
    for (int i = 0; i < ReadAhead.FIRST_REQUEST; i++) {
      stream.next();
    }
    byte[] ten = new byte[30 << 20];
    for (int i = 0; i < 3; i++) { // 90 MiB: past 64 MiB, but three of the largest
      stream.onNext(Payload.of(Unpooled.wrappedBuffer(ten)));
    }
    assertThat(cancelled).isFalse();
    ByteBuf fourth = Unpooled.wrappedBuffer(ten);
    stream.onNext(Payload.of(fourth));
    assertThat(cancelled).as("a fourth: past the limit").isTrue();
    assertThat(fourth.refCnt()).as("dropped, released").isZero();
    for (int i = 0; i < 3; i++) {
      assertThat(stream.next().data().readableBytes()).isEqualTo(30 << 20);
    }
    assertThatThrownBy(stream::hasNext)
        .isInstanceOf(io.millrace.streams.BacklogExceededException.class);
  }

  /** A blocking requester of a Reactor server whose streams are {@code items}. */
  private BlockingRequester streaming(Flux<Payload> items) throws Exception {
    return streaming(items, Server.CONFIG);
  }

  /** The same, with {@code config} on the client's side. */
  private BlockingRequester streaming(Flux<Payload> items, ConnectionConfig config)
      throws Exception {
    return BlockingRequester.of(
        connect(
            ReactorResponder.of(
                new io.millrace.reactor.ReactorHandler() {
                  @Override
                  public Flux<Payload> requestStream(Payload payload) {
                    return items;
                  }
                }),
            config));
  }

  /** A blocking iterator on a subscription that asks nothing of anyone and notes a cancel. */
  private static BlockingIterator subscribedIterator(AtomicBoolean cancelled) {
    BlockingIterator stream = new BlockingIterator();
    stream.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {
            cancelled.set(true);
          }
        });
    return stream;
  }

  @Test
  void aPayloadTheReaderHeldWhenAnotherThreadClosed_releasedByThatClose() throws Exception {
    AtomicBoolean cancelled = new AtomicBoolean();
    BlockingIterator stream = subscribedIterator(cancelled);
    ByteBuf data = Unpooled.buffer().writeInt(1);
    stream.onNext(Payload.of(data));
    assertThat(stream.hasNext()).isTrue(); // taken by the reader, not yet by next()
    Thread closer = new Thread(stream::close);
    closer.start();
    closer.join(5_000);
    assertThat(cancelled).isTrue();
    assertThat(data.refCnt()).as("released by the close, whichever thread made it").isZero();
    assertThatThrownBy(stream::next).isInstanceOf(NoSuchElementException.class);
    stream.close(); // the reader's own close, as try-with-resources makes it: nothing more
    assertThat(stream.hasNext()).isFalse();
  }

  @Test
  void blockingCallsAnswerFailAndTimeOut() throws Exception {
    BlockingRequester r = BlockingRequester.of(echo());
    assertThat(r.requestResponse(Payload.of("hi")).dataUtf8()).isEqualTo("hi");
    assertThatThrownBy(() -> r.requestResponse(Payload.of(FAIL)))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.APPLICATION_ERROR));
    assertThatThrownBy(() -> r.requestResponse(Payload.of(NEVER), Duration.ofMillis(200)))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CANCELED));
    assertThat(probe.awaitAnswerCancelled()).as("the timed-out call was cancelled").isTrue();
    r.fireAndForget(Payload.of("f"));
    assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo("f");
  }

  @Test
  void aBlockingFireAndForgetOnAClosedConnectionIsRejectedAndReleased() throws Exception {
    Connection c = echo();
    c.dispose();
    c.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
    ByteBuf data = Unpooled.buffer().writeInt(1);
    assertThatThrownBy(() -> BlockingRequester.of(c).fireAndForget(Payload.of(data)))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.REJECTED));
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void anInterruptedCallIsCancelledAndKeepsTheInterrupt() throws Exception {
    BlockingRequester r = BlockingRequester.of(echo());
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                r.requestResponse(Payload.of(NEVER));
              } catch (RuntimeException e) {
                thrown.set(e);
                interrupted.set(Thread.currentThread().isInterrupted());
              }
            });
    caller.start();
    Thread.sleep(200);
    caller.interrupt();
    caller.join(10_000);
    assertThat(thrown.get()).isInstanceOf(StreamErrorException.class);
    assertThat(interrupted.get()).isTrue();
    assertThat(probe.awaitAnswerCancelled()).isTrue();
  }

  @Test
  void aBlockingStreamIteratesInOrderAndEndsWithTheStreamsError() throws Exception {
    BlockingRequester r = BlockingRequester.of(echo());
    List<String> all = new ArrayList<>();
    try (BlockingStream s = r.requestStream(Payload.of("2000"))) {
      s.forEachRemaining(p -> all.add(p.dataUtf8()));
    }
    assertThat(all).hasSize(2000);
    for (int i = 0; i < 2000; i++) {
      assertThat(all.get(i)).isEqualTo(item(i, 0));
    }
    try (BlockingStream s = r.requestStream(Payload.of("5"))) {
      assertThat(s.stream().map(Payload::dataUtf8).collect(Collectors.toList()))
          .containsExactly("0", "1", "2", "3", "4");
    }
    BlockingStream failing = r.requestStream(Payload.of(FAIL));
    assertThat(failing.next().dataUtf8()).isEqualTo("0");
    assertThat(failing.next().dataUtf8()).isEqualTo("1");
    assertThat(failing.next().dataUtf8()).isEqualTo("2");
    assertThatThrownBy(failing::hasNext).isInstanceOf(StreamErrorException.class);
    failing.close();
  }

  @Test
  void aSlowReaderHoldsTheResponderBackAndClosingCancels() throws Exception {
    BlockingRequester r = BlockingRequester.of(echo());
    try (BlockingStream s = r.requestStream(Payload.of(INF))) {
      for (int i = 0; i < 10; i++) {
        assertThat(s.next().dataUtf8()).isEqualTo(item(i, 0));
      }
      Thread.sleep(300);
      // What the reader asked for ahead (small payloads: the most, 4,096) and the credit window's
      // prefetch (256) below it: bounded, not the whole stream.
      assertThat(probe.emitted.get()).isBetween(10L, 10L + ReadAhead.MAX_AHEAD + 256 + 64);
    }
    assertThat(probe.awaitCancelled()).as("closing cancelled the stream").isTrue();
  }

  @Test
  void blockingOnTheEventLoopIsRefused() throws Exception {
    Connection c = echo();
    BlockingRequester r = BlockingRequester.of(c);
    CompletableFuture<Throwable> refused = new CompletableFuture<>();
    c.executor()
        .execute(
            () -> {
              try {
                r.requestResponse(Payload.of("x"));
                refused.complete(null);
              } catch (Throwable t) {
                refused.complete(t);
              }
            });
    assertThat(refused.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aFutureHandlersAnswerThereAtOnce_comesBackAsALaterOneDoes_inEveryOutcome() throws Exception {
    // A plain CompletableFuture that is done is taken at once (no subscription); a minimal stage
    // goes the subscribed way: the caller sees the same either way.
    Connection c =
        connect(
            FutureResponder.of(
                payload -> {
                  String data = payload.dataUtf8();
                  CompletableFuture<Payload> f =
                      switch (data.substring(data.indexOf(':') + 1)) {
                        case "value" -> CompletableFuture.completedFuture(Payload.of("v"));
                        case "empty" -> CompletableFuture.completedFuture(null);
                        case "code" ->
                            CompletableFuture.failedFuture(
                                new StreamErrorException(USER_CODE, "custom"));
                        case "other" -> CompletableFuture.failedFuture(new IllegalStateException());
                        default -> {
                          CompletableFuture<Payload> cancelled = new CompletableFuture<>();
                          cancelled.cancel(false);
                          yield cancelled;
                        }
                      };
                  return data.startsWith("minimal:") ? f.minimalCompletionStage() : f;
                }));
    FutureRequester r = FutureRequester.of(c);
    for (String way : List.of("known:", "minimal:")) {
      assertThat(r.requestResponse(Payload.of(way + "value")).get(10, TimeUnit.SECONDS).dataUtf8())
          .as(way)
          .isEqualTo("v");
      assertThat(r.requestResponse(Payload.of(way + "empty")).get(10, TimeUnit.SECONDS))
          .as(way)
          .isNull();
      for (String failure : List.of("code", "other", "cancelled")) {
        assertThatThrownBy(
                () -> r.requestResponse(Payload.of(way + failure)).get(10, TimeUnit.SECONDS))
            .as(way + failure)
            .cause()
            .isInstanceOfSatisfying(
                StreamErrorException.class,
                e ->
                    assertThat(e.errorCode())
                        .isEqualTo(
                            failure.equals("code")
                                ? USER_CODE
                                : io.millrace.frame.ErrorCode.APPLICATION_ERROR));
      }
    }
  }

  @Test
  void aFutureHandlerAnswersLaterAndIsCancelledByThePeer() throws Exception {
    CountDownLatch handlerCancelled = new CountDownLatch(1);
    Connection c =
        connect(
            FutureResponder.of(
                new FutureHandler() {
                  @Override
                  public CompletionStage<Payload> requestResponse(Payload payload) {
                    String data = payload.dataUtf8();
                    if (data.equals(NEVER)) {
                      CompletableFuture<Payload> never = new CompletableFuture<>();
                      never.whenComplete((v, e) -> handlerCancelled.countDown());
                      return never;
                    }
                    if (data.equals(CODE)) {
                      return CompletableFuture.failedFuture(
                          new StreamErrorException(USER_CODE, "custom"));
                    }
                    return CompletableFuture.supplyAsync(() -> Payload.of("later " + data));
                  }

                  @Override
                  public void fireAndForget(Payload payload) {
                    probe.fireAndForgets.add(payload.dataUtf8());
                  }
                }));
    ReactorRequester r = ReactorRequester.of(c);
    assertThat(r.requestResponse(Payload.of("x")).map(Payload::dataUtf8).block())
        .isEqualTo("later x");
    assertThatThrownBy(() -> r.requestResponse(Payload.of(CODE)).block())
        .isInstanceOfSatisfying(
            StreamErrorException.class, e -> assertThat(e.errorCode()).isEqualTo(USER_CODE));
    assertThatThrownBy(
            () -> r.requestResponse(Payload.of(NEVER)).timeout(Duration.ofMillis(200)).block())
        .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
    assertThat(handlerCancelled.await(10, TimeUnit.SECONDS))
        .as("the future was cancelled")
        .isTrue();
    assertThatThrownBy(() -> r.requestStream(Payload.of("3")).blockLast())
        .isInstanceOf(StreamErrorException.class);
    r.fireAndForget(Payload.of("f")).block();
    assertThat(probe.fireAndForgets.poll(10, TimeUnit.SECONDS)).isEqualTo("f");
  }
}
