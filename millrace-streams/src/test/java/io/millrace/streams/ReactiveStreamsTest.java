package io.millrace.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.internal.InboundPublisher;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/** The Reactive Streams adapters end to end over TCP: what a user of them sees. */
class ReactiveStreamsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private Pair pair;

  @AfterEach
  void close() {
    if (pair != null) {
      pair.close();
    }
  }

  private ReactiveRequester echo() throws Exception {
    pair = new Pair(ReactiveResponder.of(new Echo()));
    return pair.requester();
  }

  @Test
  void requestResponseCarriesDataAndMetadata() throws Exception {
    ReactiveRequester r = echo();
    Payload p = Mono.from(r.requestResponse(Payload.of("meta", "hello"))).block(WAIT);
    assertThat(p.dataUtf8()).isEqualTo("hello");
    assertThat(p.metadataUtf8()).isEqualTo("meta");
    Payload none = Mono.from(r.requestResponse(Payload.of("no metadata"))).block(WAIT);
    assertThat(none.hasMetadata()).isFalse();
  }

  @Test
  void anEmptyAnswerCompletesWithoutAPayload() throws Exception {
    ReactiveRequester r = echo();
    assertThat(Mono.from(r.requestResponse(Payload.of("empty"))).block(WAIT)).isNull();
  }

  @Test
  void handlerFailuresReachTheRequesterAsApplicationErrorsWithoutTheirMessage() throws Exception {
    ReactiveRequester r = echo();
    assertThatThrownBy(() -> Mono.from(r.requestResponse(Payload.of("fail"))).block(WAIT))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> {
              assertThat(e.errorCode()).isEqualTo(ErrorCode.APPLICATION_ERROR);
              assertThat(e.getMessage()).isEqualTo("the handler failed");
            });
    assertThatThrownBy(() -> Mono.from(r.requestResponse(Payload.of("throw"))).block(WAIT))
        .isInstanceOf(StreamErrorException.class)
        .hasMessage("the handler failed");
    assertThatThrownBy(
            () -> Flux.from(r.requestStream(Payload.of("fail"))).collectList().block(WAIT))
        .hasMessage("the handler failed");
  }

  @Test
  void handlerFailuresCarryTheirMessageWhenTheConfigSaysSo() throws Exception {
    pair =
        new Pair(
            ReactiveResponder.of(new Echo()),
            Responder.REJECT_ALL,
            ConnectionConfig.builder().errorMessagesFromHandlers(true).build());
    ReactiveRequester r = pair.requester();
    assertThatThrownBy(() -> Mono.from(r.requestResponse(Payload.of("fail"))).block(WAIT))
        .hasMessage("failed by the handler");
    assertThatThrownBy(() -> Mono.from(r.requestResponse(Payload.of("throw"))).block(WAIT))
        .hasMessage("thrown by the handler");
    assertThatThrownBy(
            () -> Flux.from(r.requestStream(Payload.of("fail"))).collectList().block(WAIT))
        .hasMessage("failed after 3");
  }

  @Test
  void aUserErrorCodeTravels() throws Exception {
    int code = ErrorCode.MIN_USER_ALLOWED + 7;
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestResponse(Payload payload) {
                    return Mono.error(new StreamErrorException(code, "custom"));
                  }
                }));
    assertThatThrownBy(
            () -> Mono.from(pair.requester().requestResponse(Payload.of("x"))).block(WAIT))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> {
              assertThat(e.errorCode()).isEqualTo(code);
              assertThat(e.getMessage()).isEqualTo("custom"); // sent on purpose: never hidden
            });
  }

  @Test
  void aStreamArrivesWholeAndInOrderWhetherDemandIsBoundedOrNot() throws Exception {
    ReactiveRequester r = echo();
    List<String> unbounded =
        Flux.from(r.requestStream(Payload.of("1000")))
            .map(Payload::dataUtf8)
            .collectList()
            .block(WAIT);
    List<String> expected =
        IntStream.range(0, 1000).mapToObj(Integer::toString).collect(Collectors.toList());
    assertThat(unbounded).isEqualTo(expected);
    List<String> oneByOne =
        Flux.from(r.requestStream(Payload.of("1000")))
            .limitRate(1)
            .map(Payload::dataUtf8)
            .collectList()
            .block(WAIT);
    assertThat(oneByOne).isEqualTo(expected);
  }

  /** A server that counts the credit grants (REQUEST_N) it receives and sends one item each. */
  private static final class CountingGrants implements Responder {
    final AtomicInteger grants = new AtomicInteger();
    final AtomicLong sent = new AtomicLong();

    @Override
    public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
      long total = Long.parseLong(data.toString(java.nio.charset.StandardCharsets.UTF_8));
      return new StreamListener() {
        @Override
        public void onReady(Stream s) {
          grants.incrementAndGet();
          while (s.isReady() && sent.get() < total) {
            long i = sent.getAndIncrement();
            ByteBuf item = s.connection().alloc().buffer().writeLong(i);
            if (i == total - 1) {
              s.nextAndComplete(null, item);
            } else {
              s.next(null, item);
            }
          }
        }
      };
    }
  }

  @Test
  void requestOneAtATimeDoesNotCostAFrameEach() throws Exception {
    CountingGrants server = new CountingGrants();
    pair = new Pair(server);
    ReactiveRequester r =
        ReactiveRequester.of(pair.connection, StreamsOptions.builder().prefetch(16).build());
    long count = Flux.from(r.requestStream(Payload.of("480"))).limitRate(1).count().block(WAIT);
    assertThat(count).isEqualTo(480);
    // 16 up front, then 12 at a time: about 40 grants, where one per item would be 480.
    assertThat(server.grants.get()).isBetween(30, 50);
  }

  @Test
  void aSlowSubscriberHoldsTheServersPublisherBack() throws Exception {
    // The subscriber asks for 5 and the client grants its demand plus the prefetch of 32: the
    // server's Publisher is asked for 37, no more, and 32 at most wait in the client.
    assertThat(askedOfTheServer(32, 5)).isEqualTo(5 + 32);
  }

  @Test
  void creditFollowsALargeDemandAndStopsWithIt() throws Exception {
    // A subscriber that asks for 1000 at once gets them without waiting for a REQUEST_N per 8
    // (the peer is granted the whole demand), and the peer stops 8 past it.
    assertThat(askedOfTheServer(8, 1000)).isEqualTo(1000 + 8);
  }

  @Test
  void aSlowSubscriberOfLargePayloadsHasFewWaiting() throws Exception {
    // 512 KiB payloads, the default prefetch of 256: before their size is known the client grants
    // its demand and 16 (8 MiB, where 256 would be 128 MiB); once it is, about 1 MiB ahead (one).
    AtomicLong asked = new AtomicLong();
    ReactiveRequester r = endlessServer(asked, 512 << 10, StreamsOptions.DEFAULT);
    Taking taking = new Taking(2);
    r.requestStream(Payload.of("x")).subscribe(taking);
    assertThat(taking.received.await(10, TimeUnit.SECONDS)).isTrue();
    assertSettlesAt(asked, 2 + InboundPublisher.FIRST_PREFETCH);
    taking.more(40);
    assertThat(taking.received.await(10, TimeUnit.SECONDS)).isTrue();
    assertSettlesAt(asked, 42 + 1);
    taking.subscription.cancel();
  }

  /**
   * Waits (bounded) for {@code count} to reach {@code expected}, which takes megabytes crossing the
   * loopback, then checks it stays there: time for anything more to flow, if it would.
   */
  private static void assertSettlesAt(AtomicLong count, long expected) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (count.get() < expected && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    Thread.sleep(300);
    assertThat(count.get()).isEqualTo(expected);
  }

  @Test
  void payloadsThatOutgrowTheirCredit_pastTheLimitOfBytesWaiting_cancelTheStream()
      throws Exception {
    // 100 small payloads, then 1 MiB ones: credit granted at the small size lets the server send
    // hundreds of the large, more than the limit; the subscriber, having taken the small ones and
    // asked for nothing more, hears of it, and the server's Publisher is cancelled.
    CountDownLatch serverCancelled = new CountDownLatch(1);
    AtomicInteger sent = new AtomicInteger();
    byte[] mebibyte = new byte[1 << 20];
    Flux<Payload> items =
        Flux.range(0, 1_000)
            .map(i -> i < 100 ? Payload.of("small") : Payload.of(Unpooled.wrappedBuffer(mebibyte)))
            .doOnCancel(serverCancelled::countDown);
    Recording recording = new Recording(100);
    streamingServer(items, sent).requestStream(Payload.of("x")).subscribe(recording);
    assertThat(recording.ended.await(10, TimeUnit.SECONDS)).as("the subscriber was told").isTrue();
    assertThat(recording.error.get()).isInstanceOf(BacklogExceededException.class);
    assertThat(recording.sizes).as("what it asked for").hasSize(100);
    assertThat(serverCancelled.await(10, TimeUnit.SECONDS)).as("the server heard").isTrue();
  }

  @Test
  void aSlowSubscriberOfLargePayloads_getsItsFirstWindowAndThenEveryOne_noneCancelled()
      throws Exception {
    // 5 MiB payloads, one asked for: before their size is known the client grants that one and 16
    // more, which all come and wait (80 MiB, past the stream's 64 MiB limit, by the client's own
    // grant, and past the connection's default: this connection allows 128 MiB); then 9 MiB ones,
    // asked for one at a time.
    byte[] five = new byte[5 << 20];
    byte[] nine = new byte[9 << 20];
    AtomicInteger sent = new AtomicInteger();
    Flux<Payload> items =
        Flux.range(0, 30).map(i -> Payload.of(Unpooled.wrappedBuffer(i < 20 ? five : nine)));
    Recording recording = new Recording(1);
    ConnectionConfig roomy = ConnectionConfig.builder().maxUnreadBytes(128L << 20).build();
    streamingServer(items, sent, roomy).requestStream(Payload.of("x")).subscribe(recording);
    for (int i = 0; i < 500 && sent.get() < 17; i++) {
      Thread.sleep(10);
    }
    assertThat(sent.get()).as("the first grant, sent").isEqualTo(17);
    Thread.sleep(1_000); // time for all of it to come and wait
    for (int i = 1; i < 30 && recording.ended.getCount() > 0; i++) {
      recording.subscription.request(1);
      Thread.sleep(20);
    }
    assertThat(recording.ended.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(recording.error.get()).isNull();
    assertThat(recording.sizes).hasSize(30);
    assertThat(recording.sizes.subList(20, 30)).containsOnly(9 << 20);
  }

  @Test
  void aFirstWindowOfLargePayloads_pastTheConnectionsLimit_cancelsTheStream() throws Exception {
    // As above at the default limit of 64 MiB a connection: the first grant's 17 payloads of 5 MiB
    // would wait 80 MiB, so the one past 64 MiB cancels the stream.
    CountDownLatch serverCancelled = new CountDownLatch(1);
    byte[] five = new byte[5 << 20];
    Flux<Payload> items =
        Flux.range(0, 30)
            .map(i -> Payload.of(Unpooled.wrappedBuffer(five)))
            .doOnCancel(serverCancelled::countDown);
    Recording recording = new Recording(1);
    streamingServer(items, new AtomicInteger()).requestStream(Payload.of("x")).subscribe(recording);
    assertThat(recording.ended.await(30, TimeUnit.SECONDS)).as("the subscriber was told").isTrue();
    assertThat(recording.error.get())
        .isInstanceOf(BacklogExceededException.class)
        .hasMessageContaining("on its connection")
        .hasMessageContaining(String.valueOf(64L << 20));
    assertThat(recording.sizes).as("what it asked for").hasSize(1);
    assertThat(serverCancelled.await(10, TimeUnit.SECONDS)).as("the server heard").isTrue();
  }

  @Test
  void streamsTogetherPastTheConnectionsLimit_cancelTheOneThatPassesIt_andWhatIsReadFreesRoom()
      throws Exception {
    // 260 KiB a connection; each stream sends four payloads of 64 KiB to a subscriber that asked
    // for one: three wait. A's 192 KiB and B's second fill the connection (each payload also counts
    // 64 bytes), so B's third cancels B.
    // Once A's subscriber has read, later streams' three fit again: nothing stays charged.
    byte[] chunk = new byte[64 << 10];
    AtomicInteger sent = new AtomicInteger();
    Flux<Payload> items = Flux.range(0, 4).map(i -> Payload.of(Unpooled.wrappedBuffer(chunk)));
    ConnectionConfig small = ConnectionConfig.builder().maxUnreadBytes(260 << 10).build();
    ReactiveRequester requester = streamingServer(items, sent, small);
    Recording a = new Recording(1);
    requester.requestStream(Payload.of("a")).subscribe(a);
    awaitQueued(sent, 4);
    Recording b = new Recording(1);
    requester.requestStream(Payload.of("b")).subscribe(b);
    assertThat(b.ended.await(10, TimeUnit.SECONDS)).as("b was told").isTrue();
    assertThat(b.error.get())
        .isInstanceOf(BacklogExceededException.class)
        .hasMessageContaining("on its connection");
    a.subscription.request(3);
    assertThat(a.ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(a.error.get()).isNull();
    assertThat(a.sizes).hasSize(4);
    // The same room, again and again: whether the subscriber reads what waits or cancels it (last).
    for (int round = 0; round < 5; round++) {
      int before = sent.get();
      Recording c = new Recording(1);
      requester.requestStream(Payload.of("c")).subscribe(c);
      awaitQueued(sent, before + 4);
      if (round % 2 == 0) {
        c.subscription.cancel(); // what waits is dropped
        continue;
      }
      c.subscription.request(3);
      assertThat(c.ended.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(c.error.get()).as("round %d", round).isNull();
      assertThat(c.sizes).hasSize(4);
    }
    // Prefetch queues tell the budget as they hand on or drop: exact, without a walk.
    assertThat(unreadOnTheClient(false)).as("nothing counted once nothing waits").isZero();
    assertThat(unreadOnTheClient(true)).isZero();
  }

  /** What the client's connection counts as waiting for readers, after a walk if {@code walk}. */
  private long unreadOnTheClient(boolean walk) throws Exception {
    var budget = io.millrace.core.internal.UnreadBudget.of(pair.connection);
    return pair.connection
        .executor()
        .submit(() -> walk ? budget.recount() : budget.charged())
        .get(10, TimeUnit.SECONDS);
  }

  /**
   * Waits until the server has sent {@code count} payloads in all, and a little for them to come.
   */
  private static void awaitQueued(AtomicInteger sent, int count) throws InterruptedException {
    for (int i = 0; i < 500 && sent.get() < count; i++) {
      Thread.sleep(10);
    }
    assertThat(sent.get()).isGreaterThanOrEqualTo(count);
    Thread.sleep(200); // (sent: written to the socket; then read and queued on the client)
  }

  @Test
  void aHeaderThenLargeChunks_toASubscriberThatTakesOneAtATimeSlowly_allArrive() throws Exception {
    // A small payload first opens the prefetch by doubling only (to 32), so the 512 KiB chunks
    // granted at the header's size are 16 MiB at most, not 256 of them (128 MiB, past the limit).
    byte[] chunk = new byte[512 << 10];
    Flux<Payload> items =
        Flux.range(0, 201)
            .map(i -> i == 0 ? Payload.of("header") : Payload.of(Unpooled.wrappedBuffer(chunk)));
    Recording recording = new Recording(1);
    streamingServer(items, new AtomicInteger()).requestStream(Payload.of("x")).subscribe(recording);
    for (int i = 0; i < 500 && recording.sizes.isEmpty(); i++) {
      Thread.sleep(10);
    }
    recording.subscription.request(1); // asked for as soon as the header came
    Thread.sleep(1_000); // then nothing for a while: what was granted comes and waits
    for (int i = 2; i < 201 && recording.ended.getCount() > 0; i++) {
      recording.subscription.request(1);
    }
    recording.subscription.request(1);
    assertThat(recording.ended.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(recording.error.get()).isNull();
    assertThat(recording.sizes).hasSize(201);
  }

  /**
   * A server whose streams are {@code items}, counting in {@code sent} what it sent; a requester.
   */
  private ReactiveRequester streamingServer(Flux<Payload> items, AtomicInteger sent)
      throws Exception {
    return streamingServer(items, sent, ConnectionConfig.DEFAULT);
  }

  private ReactiveRequester streamingServer(
      Flux<Payload> items, AtomicInteger sent, ConnectionConfig config) throws Exception {
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    return items.doOnNext(p -> sent.incrementAndGet());
                  }
                }),
            Responder.REJECT_ALL,
            config);
    return pair.requester();
  }

  /** Asks for {@code first} and records the payloads' sizes and the end. */
  private static final class Recording implements Subscriber<Payload> {
    final long first;
    final List<Integer> sizes = new java.util.concurrent.CopyOnWriteArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    final CountDownLatch ended = new CountDownLatch(1);
    volatile Subscription subscription;

    Recording(long first) {
      this.first = first;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      s.request(first);
    }

    @Override
    public void onNext(Payload p) {
      sizes.add(p.length());
    }

    @Override
    public void onError(Throwable t) {
      error.set(t);
      ended.countDown();
    }

    @Override
    public void onComplete() {
      ended.countDown();
    }
  }

  /**
   * How many items an endless server stream was asked for once a subscriber with {@code prefetch}
   * had requested {@code n} once and received them.
   */
  private long askedOfTheServer(int prefetch, int n) throws Exception {
    AtomicLong asked = new AtomicLong();
    ReactiveRequester r =
        endlessServer(asked, 0, StreamsOptions.builder().prefetch(prefetch).build());
    Taking taking = new Taking(n);
    r.requestStream(Payload.of("x")).subscribe(taking);
    assertThat(taking.received.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(300); // time for anything more to flow, if it would
    taking.subscription.cancel();
    return asked.get();
  }

  /**
   * A server whose streams never end (their items' numbers, or {@code size} bytes each), counting
   * in {@code asked} what its Publisher is asked for; a requester of it with {@code options}.
   */
  private ReactiveRequester endlessServer(AtomicLong asked, int size, StreamsOptions options)
      throws Exception {
    byte[] large = new byte[size];
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    return Flux.range(0, Integer.MAX_VALUE)
                        .doOnRequest(asked::addAndGet)
                        .map(
                            i ->
                                size == 0
                                    ? Payload.of(Integer.toString(i))
                                    : Payload.of(Unpooled.wrappedBuffer(large)));
                  }
                }));
    return ReactiveRequester.of(pair.connection, options);
  }

  /** Requests {@code n} once (and more with {@link #more}) and counts down as they come. */
  private static final class Taking implements Subscriber<Payload> {
    volatile CountDownLatch received;
    final long n;
    volatile Subscription subscription;

    Taking(long n) {
      this.n = n;
      this.received = new CountDownLatch((int) n);
    }

    void more(int m) {
      received = new CountDownLatch(m);
      subscription.request(m);
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      s.request(n);
    }

    @Override
    public void onNext(Payload p) {
      received.countDown();
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }

  @Test
  void cancellingMidStreamReachesTheServersPublisher() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    // Without the drop, a tick that finds no demand fails the interval instead
                    // (its overflow error), and a CANCEL that comes later than the credit's last
                    // tick, a stall of a dozen milliseconds, would find nothing left to cancel.
                    return Flux.interval(Duration.ofMillis(1))
                        .onBackpressureDrop()
                        .map(i -> Payload.of(Long.toString(i)))
                        .doOnCancel(cancelled::countDown);
                  }
                }));
    List<Payload> first =
        Flux.from(pair.requester().requestStream(Payload.of("x")))
            .take(10)
            .collectList()
            .block(WAIT); // bounded: a stall fails the test instead of hanging the build
    assertThat(first).hasSize(10);
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pair.connection.activeStreams()).isZero();
  }

  @Test
  void aCancelAfterAChannelsAnswersEnded_isANoOp_theSendingHalfGoesOn() throws Exception {
    // Reactive Streams rules 1.6 and 3.7: after onComplete the subscription counts as cancelled
    // and a cancel does nothing (Reactor's zip cancels its inners after one completed). The
    // responder answered and completed while still reading: the requester's payloads go on.
    AtomicInteger read = new AtomicInteger();
    CountDownLatch responderSawTheEnd = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestChannel(
                      Payload first, Publisher<Payload> inbound) {
                    first.release();
                    Flux.from(inbound)
                        .doOnNext(p -> read.incrementAndGet())
                        .doOnNext(Payload::release)
                        .doFinally(signal -> responderSawTheEnd.countDown())
                        .subscribe(p -> {}, e -> {});
                    return Flux.just(Payload.of("only"));
                  }
                }));
    ReactiveRequester r = ReactiveRequester.of(pair.connection);
    Flux<Payload> ticking =
        Flux.interval(Duration.ofMillis(5))
            .onBackpressureDrop() // (interval fails a tick that nobody asked for)
            .map(i -> Payload.of(Long.toString(i)));
    AtomicReference<Subscription> subscription = new AtomicReference<>();
    CountDownLatch completed = new CountDownLatch(1);
    r.requestChannel(ticking)
        .subscribe(
            new Subscriber<Payload>() {
              @Override
              public void onSubscribe(Subscription s) {
                subscription.set(s);
                s.request(Long.MAX_VALUE);
              }

              @Override
              public void onNext(Payload p) {
                p.release();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onComplete() {
                completed.countDown();
              }
            });
    assertThat(completed.await(10, TimeUnit.SECONDS)).isTrue();
    subscription.get().cancel();
    int before = read.get();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (read.get() == before && System.nanoTime() < until) {
      Thread.sleep(10);
    }
    assertThat(read.get()).as("still reading").isGreaterThan(before);
    assertThat(responderSawTheEnd.getCount()).isOne();
    pair.connection.dispose(); // (the ticking payloads stop with the connection)
  }

  @Test
  void fireAndForgetsFasterThanTheirHandlers_areBounded_notQueuedWithoutEnd() throws Exception {
    // The handler executor runs nothing until released: without a bound, every fire-and-forget
    // would wait in its queue with its payload.
    java.util.Queue<Runnable> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
    AtomicInteger handled = new AtomicInteger();
    pair =
        new Pair(
            ReactiveResponder.of(
                counting(handled, Mono.empty()),
                StreamsOptions.builder().handlerExecutor(held::add).build()));
    ReactiveRequester r = ReactiveRequester.of(pair.connection);
    int sent = ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING + 1_000;
    for (int i = 0; i < sent; i++) {
      Mono.from(r.fireAndForget(Payload.of("x"))).block(WAIT);
    }
    awaitSize(held, ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING);
    Thread.sleep(300); // for the rest to arrive (and be dropped)
    assertThat(held).hasSize(ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING);
    for (Runnable task; (task = held.poll()) != null; ) {
      task.run();
    }
    assertThat(handled.get()).isEqualTo(ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING);
    // Handled, they count no more: the next ones are taken again.
    Mono.from(r.fireAndForget(Payload.of("y"))).block(WAIT);
    awaitSize(held, 1);
    held.poll().run();
    assertThat(handled.get()).isEqualTo(ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING + 1);
  }

  @Test
  void fireAndForgetsThatNeverEnd_holdPlacesOnTheirOwnConnectionOnly() throws Exception {
    // One responder for every connection (the usual acceptor); handlers whose Publishers never end.
    AtomicInteger handled = new AtomicInteger();
    pair = new Pair(ReactiveResponder.of(counting(handled, Mono.never())));
    ReactiveRequester first = ReactiveRequester.of(pair.connection);
    int max = ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING;
    for (int i = 0; i < max + 100; i++) {
      Mono.from(first.fireAndForget(Payload.of("x"))).block(WAIT);
    }
    awaitCount(handled, max);
    Thread.sleep(300); // for the rest to arrive, and be dropped
    assertThat(handled.get()).isEqualTo(max);
    io.millrace.core.Connection other =
        pair.client.connect("127.0.0.1", pair.server.port()).get(10, TimeUnit.SECONDS);
    Mono.from(ReactiveRequester.of(other).fireAndForget(Payload.of("y"))).block(WAIT);
    awaitCount(handled, max + 1); // the other connection's are taken
  }

  /**
   * A handler of fire-and-forgets that counts them in {@code handled} and ends them with {@code
   * end}.
   */
  private static ReactiveHandler counting(AtomicInteger handled, Mono<Void> end) {
    return new ReactiveHandler() {
      @Override
      public Publisher<Void> fireAndForget(Payload payload) {
        payload.release();
        handled.incrementAndGet();
        return end;
      }
    };
  }

  private static void awaitCount(AtomicInteger n, int count) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (n.get() < count && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(n.get()).isEqualTo(count);
  }

  private static void awaitSize(java.util.Queue<?> q, int n) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (q.size() < n && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(q).hasSize(n);
  }

  @Test
  void aResponderThatSubscribedToAChannelButAskedForNothing_hearsThatTheConnectionWent()
      throws Exception {
    CountDownLatch subscribed = new CountDownLatch(1);
    AtomicReference<Throwable> told = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestChannel(
                      Payload first, Publisher<Payload> inbound) {
                    first.release();
                    inbound.subscribe(
                        new Subscriber<Payload>() {
                          @Override
                          public void onSubscribe(Subscription s) {
                            subscribed.countDown(); // and asks for nothing (yet)
                          }

                          @Override
                          public void onNext(Payload p) {
                            p.release();
                          }

                          @Override
                          public void onError(Throwable t) {
                            told.set(t);
                            ended.countDown();
                          }

                          @Override
                          public void onComplete() {
                            ended.countDown();
                          }
                        });
                    return Flux.never();
                  }
                }));
    Flux.from(
            ReactiveRequester.of(pair.connection)
                .requestChannel(Flux.just(Payload.of("a")).concatWith(Flux.never())))
        .subscribe(Payload::release, e -> {});
    assertThat(subscribed.await(10, TimeUnit.SECONDS)).isTrue();
    pair.client.shutdownNow(); // the connection goes
    assertThat(ended.await(10, TimeUnit.SECONDS)).as("told without asking").isTrue();
    assertThat(told.get()).isInstanceOf(StreamErrorException.class);
  }

  @Test
  void aChannelAskedForAfterItsLoopHasStopped_endsOnceWithAnErrorToldAfterTheLoop()
      throws Exception {
    ReactiveRequester r = echo();
    pair.client.shutdownNow();
    assertThat(pair.client.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    List<Object> signals = new java.util.concurrent.CopyOnWriteArrayList<>();
    CountDownLatch ended = new CountDownLatch(1);
    Thread test = Thread.currentThread();
    // A channel starts on the loop, so its first request's drain is refused straight away: the
    // publisher finds the loop gone and tells its subscriber from the loop's termination.
    r.requestChannel(Flux.<Payload>never())
        .subscribe(
            new Subscriber<Payload>() {
              @Override
              public void onSubscribe(Subscription s) {
                s.request(1); // from this thread: the loop refuses the drain
                signals.add("onSubscribe returns");
              }

              @Override
              public void onNext(Payload p) {
                signals.add(p);
                p.release();
              }

              @Override
              public void onError(Throwable t) {
                signals.add(Thread.currentThread() == test ? "on the test's thread" : t);
                ended.countDown();
              }

              @Override
              public void onComplete() {
                signals.add("complete");
              }
            });
    assertThat(ended.await(10, TimeUnit.SECONDS)).as("told, not left waiting").isTrue();
    Thread.sleep(50); // room for a second terminal signal, which must not come
    assertThat(signals).hasSize(2).first().isEqualTo("onSubscribe returns");
    assertThat(signals.get(1))
        .isInstanceOfSatisfying(
            StreamErrorException.class,
            e -> assertThat(e).hasMessageContaining("the connection's loop is shut down"));
  }

  @Test
  void aChannelEchoesEveryPayloadInOrder() throws Exception {
    ReactiveRequester r = echo();
    Flux<Payload> out = Flux.range(0, 2000).map(i -> Payload.of(Integer.toString(i)));
    List<String> back =
        Flux.from(r.requestChannel(out)).map(Payload::dataUtf8).collectList().block(WAIT);
    assertThat(back)
        .isEqualTo(
            IntStream.range(0, 2000).mapToObj(Integer::toString).collect(Collectors.toList()));
  }

  @Test
  void aChannelWhosePayloadsFailEndsWithTheirError() throws Exception {
    ReactiveRequester r = echo();
    Flux<Payload> out =
        Flux.concat(
            Flux.range(0, 3).map(i -> Payload.of(Integer.toString(i))),
            Flux.error(new IllegalStateException("the requester's payloads failed")));
    assertThatThrownBy(() -> Flux.from(r.requestChannel(out)).blockLast(WAIT))
        .hasMessage("the requester's payloads failed");
    assertThat(pair.connection.activeStreams()).isZero();
  }

  @Test
  void aChannelWithoutAFirstPayloadFails() throws Exception {
    ReactiveRequester r = echo();
    assertThatThrownBy(() -> Flux.from(r.requestChannel(Flux.empty())).blockLast(WAIT))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void cancellingAChannelStopsWhatTheRequesterSends() throws Exception {
    ReactiveRequester r = echo();
    CountDownLatch stopped = new CountDownLatch(1);
    Flux<Payload> out =
        Flux.interval(Duration.ofMillis(1))
            .onBackpressureDrop()
            .map(i -> Payload.of(Long.toString(i)))
            .doOnCancel(stopped::countDown);
    assertThat(Flux.from(r.requestChannel(out)).take(5).count().block(WAIT)).isEqualTo(5);
    assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aHandlerMethodOnTheExecutor_hearsTheCancelWhileItRuns_andNotOnceItHasReturned()
      throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "handlers"));
    try {
      CountDownLatch running = new CountDownLatch(1);
      CountDownLatch heard = new CountDownLatch(1);
      AtomicReference<CountDownLatch> quickReturned = new AtomicReference<>();
      AtomicInteger hookRuns = new AtomicInteger();
      List<Boolean> hooked = new java.util.concurrent.CopyOnWriteArrayList<>();
      AtomicReference<Boolean> heardBeforeReturning = new AtomicReference<>();
      CountDownLatch slowReturned = new CountDownLatch(1);
      pair =
          new Pair(
              ReactiveResponder.of(
                  new ReactiveHandler() {
                    @Override
                    public Publisher<Payload> requestStream(Payload payload) {
                      String kind = payload.dataUtf8();
                      payload.release();
                      Runnable hook =
                          () -> {
                            hookRuns.incrementAndGet();
                            heard.countDown();
                          };
                      hooked.add(ReactiveResponder.onCancelWhileHandling(hook));
                      if (kind.equals("slow")) {
                        running.countDown();
                        try { // a slow query: it stops when the caller has gone
                          heardBeforeReturning.set(heard.await(10, TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        ReactiveResponder.removeCancelWhileHandling(hook);
                        slowReturned.countDown();
                        return Flux.<Payload>never();
                      } else if (kind.equals("removes")) {
                        ReactiveResponder.removeCancelWhileHandling(hook);
                      } // else it leaves its hook: taken off as it returns
                      // Told once the answer is subscribed (the executor's task, after the return).
                      CountDownLatch returned = quickReturned.get();
                      return Flux.<Payload>never().doOnSubscribe(s -> returned.countDown());
                    }
                  },
                  StreamsOptions.builder().handlerExecutor(executor).build()));
      reactor.core.Disposable call =
          Flux.from(pair.requester().requestStream(Payload.of("slow"))).subscribe();
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      call.dispose(); // CANCEL while the method runs
      assertThat(heard.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(slowReturned.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(heardBeforeReturning.get()).isTrue();
      // Methods that returned, having taken their hook off or not: the cancel that comes after
      // (through the subscription to the answer) runs no hook.
      for (String kind : List.of("removes", "leaves")) {
        CountDownLatch returned = new CountDownLatch(1);
        quickReturned.set(returned);
        reactor.core.Disposable quick =
            Flux.from(pair.requester().requestStream(Payload.of(kind))).subscribe();
        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue(); // its answer subscribed
        quick.dispose();
        Thread.sleep(100);
      }
      assertThat(hookRuns.get()).isEqualTo(1);
      assertThat(hooked).containsExactly(true, true, true);
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void aHandlerMethodOnTheLoop_setsNoCancelHook() throws Exception {
    AtomicReference<Boolean> hooked = new AtomicReference<>();
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestResponse(Payload payload) {
                    hooked.set(ReactiveResponder.onCancelWhileHandling(() -> {}));
                    return Mono.just(payload);
                  }
                }));
    assertThat(Mono.from(pair.requester().requestResponse(Payload.of("x"))).block(WAIT).dataUtf8())
        .isEqualTo("x");
    assertThat(hooked.get()).isFalse();
  }

  @Test
  void handlersRunOnTheExecutorGiven() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "handlers"));
    try {
      AtomicReference<String> thread = new AtomicReference<>();
      pair =
          new Pair(
              ReactiveResponder.of(
                  new ReactiveHandler() {
                    @Override
                    public Publisher<Payload> requestResponse(Payload payload) {
                      thread.set(Thread.currentThread().getName());
                      return Mono.just(payload);
                    }
                  },
                  StreamsOptions.builder().handlerExecutor(executor).build()));
      Payload p = Mono.from(pair.requester().requestResponse(Payload.of("x"))).block(WAIT);
      assertThat(p.dataUtf8()).isEqualTo("x");
      assertThat(thread.get()).isEqualTo("handlers");
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void zeroCopyPayloadsAreReleasedByTheirReceiver() throws Exception {
    pair =
        new Pair(ReactiveResponder.of(new Echo()), Responder.REJECT_ALL, ConnectionConfig.DEFAULT);
    ReactiveRequester r =
        ReactiveRequester.of(pair.connection, StreamsOptions.builder().zeroCopy(true).build());
    List<Payload> got = Flux.from(r.requestStream(Payload.of("100"))).collectList().block(WAIT);
    assertThat(got).hasSize(100);
    assertThat(got.get(99).data().refCnt()).isPositive();
    got.forEach(Payload::release);
  }

  @Test
  void unsupportedInteractionsReleaseZeroCopyRequests() throws Exception {
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {}, StreamsOptions.builder().zeroCopy(true).build()));
    ReactiveRequester r = pair.requester();
    for (int i = 0; i < 20; i++) {
      assertThatThrownBy(() -> Flux.from(r.requestStream(Payload.of("x"))).blockLast(WAIT))
          .isInstanceOf(StreamErrorException.class);
    }
    // The leak check after the class fails if a request payload was kept.
  }

  @Test
  void aChannelRefusedByAClosingConnectionFailsAndReleasesEveryPayload() throws Exception {
    ReactiveRequester r = echo();
    pair.connection.close();
    Flux<Payload> out =
        Flux.range(0, 3).map(i -> Payload.of(pair.connection.alloc().buffer().writeInt(i)));
    assertThatThrownBy(() -> Flux.from(r.requestChannel(out)).blockLast(WAIT))
        .isInstanceOf(StreamErrorException.class);
  }

  @Test
  void callsMadeFromASupplierCanBeRetried() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestResponse(Payload payload) {
                    return attempts.incrementAndGet() < 3
                        ? Mono.error(new StreamErrorException(ErrorCode.REJECTED, "busy"))
                        : Mono.just(Payload.of("ok " + payload.dataUtf8()));
                  }
                }));
    ReactiveRequester r = pair.requester();
    Mono<String> call = Mono.from(r.requestResponse(() -> Payload.of("x"))).map(Payload::dataUtf8);
    assertThat(call.retry(5).block(WAIT)).isEqualTo("ok x");
    assertThat(attempts).hasValue(3);
    // The one-payload form is one call: a second subscriber is refused, not sent twice.
    Publisher<Payload> once = r.requestResponse(Payload.of("y"));
    assertThat(Mono.from(once).map(Payload::dataUtf8).block(WAIT)).isEqualTo("ok y");
    assertThatThrownBy(() -> Mono.from(once).block(WAIT)).isInstanceOf(IllegalStateException.class);
    assertThat(attempts).hasValue(4);
  }

  @Test
  void aStreamWhoseFirstPayloadCannotBeSent_failsAndStopsItsPublisher() throws Exception {
    // The handler answers on the loop, inside the request's dispatch, before the engine has the
    // sink as the stream's listener: the failed write must stop the Publisher by itself.
    CountDownLatch cancelled = new CountDownLatch(1);
    List<ByteBuf> made = new java.util.concurrent.CopyOnWriteArrayList<>();
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    return Flux.range(0, 1_000)
                        .map(
                            i -> {
                              ByteBuf b = pair.connection.alloc().buffer(4).writeInt(i);
                              made.add(b);
                              if (i == 0) {
                                b.release(); // unusable: its write fails the stream
                              }
                              return Payload.of(b);
                            })
                        .doOnCancel(cancelled::countDown);
                  }
                }));
    assertThatThrownBy(
            () -> Flux.from(pair.requester().requestStream(Payload.of("x"))).blockLast(WAIT))
        .isInstanceOf(StreamErrorException.class);
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the Publisher is stopped").isTrue();
    assertThat(made).isNotEmpty().allMatch(b -> b.refCnt() == 0);
  }

  @Test
  void aChannelWhoseFirstAnswerCannotBeSent_endsTheHandlersInboundToo() throws Exception {
    // As above, for a channel: the handler reads the requester's payloads, and its own first
    // payload fails the stream inside the request's dispatch.
    CountDownLatch cancelled = new CountDownLatch(1);
    AtomicReference<Throwable> inboundError = new AtomicReference<>();
    CountDownLatch inboundEnded = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestChannel(
                      Payload first, Publisher<Payload> payloads) {
                    Flux.from(payloads)
                        .subscribe(
                            p -> {},
                            e -> {
                              inboundError.set(e);
                              inboundEnded.countDown();
                            },
                            inboundEnded::countDown);
                    ByteBuf gone = pair.connection.alloc().buffer(4).writeInt(0);
                    gone.release();
                    return Flux.just(Payload.of(gone))
                        .concatWith(Flux.never())
                        .doOnCancel(cancelled::countDown);
                  }
                }));
    Flux<Payload> out = Flux.just(Payload.of("a")).concatWith(Flux.never());
    assertThatThrownBy(() -> Flux.from(pair.requester().requestChannel(out)).blockLast(WAIT))
        .isInstanceOf(StreamErrorException.class);
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the answer is stopped").isTrue();
    assertThat(inboundEnded.await(10, TimeUnit.SECONDS)).as("the inbound hears the end").isTrue();
    assertThat(inboundError.get()).isInstanceOf(StreamErrorException.class);
  }

  @Test
  void aStreamPayloadThatCannotBeHandedOver_failsTheStream_fromAnotherThreadToo() throws Exception {
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    ByteBuf gone = Unpooled.copiedBuffer("gone", StandardCharsets.UTF_8);
                    gone.release();
                    // A lent payload whose buffers are gone cannot even be handed to the stream;
                    // from another thread it goes out in a drain task, not in the emitter's call.
                    return Flux.just(Payload.lent(null, gone))
                        .concatWith(Flux.never())
                        .subscribeOn(reactor.core.scheduler.Schedulers.single());
                  }
                }));
    assertThatThrownBy(
            () -> Flux.from(pair.requester().requestStream(Payload.of("x"))).blockLast(WAIT))
        .isInstanceOf(StreamErrorException.class);
  }

  @Test
  void aRequestResponseAnswerWithMoreThanOneItemIsCancelledAfterTheFirst() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestResponse(Payload payload) {
                    return Flux.range(0, 1_000)
                        .map(i -> Payload.of(Integer.toString(i)))
                        .doOnCancel(cancelled::countDown);
                  }
                }));
    Payload p = Mono.from(pair.requester().requestResponse(Payload.of("x"))).block(WAIT);
    assertThat(p.dataUtf8()).isEqualTo("0");
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aSingleAnswerEndsByItselfAndIsNotCancelled() throws Exception {
    AtomicReference<SignalType> ended = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestResponse(Payload payload) {
                    return Mono.just(Payload.of("ok"))
                        .doFinally(
                            signal -> {
                              ended.set(signal);
                              done.countDown();
                            });
                  }
                }));
    assertThat(Mono.from(pair.requester().requestResponse(Payload.of("x"))).block(WAIT).dataUtf8())
        .isEqualTo("ok");
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ended.get())
        .as("metrics see a success, not a cancel")
        .isEqualTo(SignalType.ON_COMPLETE);
  }

  @Test
  void nullArgumentsFailAtTheCall() throws Exception {
    ReactiveRequester r = echo();
    assertThatThrownBy(() -> r.requestResponse((Payload) null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> r.requestStream((Payload) null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> r.fireAndForget((Payload) null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> r.requestChannel(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> r.metadataPush(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void theConnectionClosingFailsOpenStreams() throws Exception {
    ReactiveRequester r = echo();
    CountDownLatch failed = new CountDownLatch(1);
    AtomicReference<Throwable> error = new AtomicReference<>();
    Flux.from(r.requestStream(Payload.of("inf")))
        .limitRate(8)
        .delayElements(Duration.ofMillis(1))
        .subscribe(
            p -> {},
            e -> {
              error.set(e);
              failed.countDown();
            });
    Thread.sleep(100);
    pair.server.shutdownNow();
    assertThat(failed.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(error.get()).isInstanceOf(StreamErrorException.class);
  }

  /** Reads each payload in place, keeping what it read and whether the payload was lent. */
  private static class InPlaceReader
      implements Subscriber<Payload>, io.millrace.streams.internal.ReadsInPlace {
    final List<String> read = new java.util.concurrent.CopyOnWriteArrayList<>();
    final List<Boolean> lent = new java.util.concurrent.CopyOnWriteArrayList<>();
    final CountDownLatch done = new CountDownLatch(1);
    final long firstRequest;
    volatile Subscription subscription;

    InPlaceReader(long firstRequest) {
      this.firstRequest = firstRequest;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      s.request(firstRequest);
    }

    @Override
    public void onNext(Payload p) {
      read.add(p.dataUtf8());
      boolean wasLent;
      try {
        p.retain();
        p.release(); // the retain above
        wasLent = false;
      } catch (IllegalStateException e) {
        wasLent = true;
      }
      lent.add(wasLent);
      p.release();
    }

    @Override
    public void onError(Throwable t) {
      done.countDown();
    }

    @Override
    public void onComplete() {
      done.countDown();
    }
  }

  /**
   * Streams "0".."9" to {@code reader}, which asks for 3 first: those go straight out as they
   * arrive, the other 7 (within the prefetch of 8) wait until it asks for the rest.
   */
  private static void readThreeThenTheRest(ReactiveRequester r, InPlaceReader reader)
      throws InterruptedException {
    r.requestStream(Payload.of("10")).subscribe(reader);
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (reader.read.size() < 3 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // The server's 10 went out in one batch, so the client read them in one go: the 7 beyond the
    // demand were queued in the same read that delivered the first 3. The pause only makes sure
    // that read has finished.
    Thread.sleep(100);
    assertThat(reader.read).hasSize(3);
    reader.subscription.request(Long.MAX_VALUE);
    assertThat(reader.done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(reader.read)
        .containsExactlyElementsOf(
            IntStream.range(0, 10).mapToObj(Integer::toString).collect(Collectors.toList()));
  }

  @Test
  void aSubscriberThatReadsInPlaceIsLentWhatGoesStraightOutAndOwnsWhatWaited() throws Exception {
    ReactiveRequester echo = echo();
    for (boolean zeroCopy : new boolean[] {true, false}) {
      ReactiveRequester r =
          ReactiveRequester.of(
              echo.connection(), StreamsOptions.builder().prefetch(8).zeroCopy(zeroCopy).build());
      InPlaceReader reader = new InPlaceReader(3);
      readThreeThenTheRest(r, reader);
      assertThat(reader.lent.subList(0, 3)).containsOnly(true);
      assertThat(reader.lent.subList(3, 10)).containsOnly(false);
    }
  }

  /** An {@link InPlaceReader} that takes lent payloads as bare buffers: how each one came. */
  private static final class BufferReader extends InPlaceReader
      implements io.millrace.streams.internal.ReadsBuffersInPlace {
    final List<String> how = new java.util.concurrent.CopyOnWriteArrayList<>();

    BufferReader(long firstRequest) {
      super(firstRequest);
    }

    @Override
    public void onNextInPlace(io.netty.buffer.ByteBuf metadata, io.netty.buffer.ByteBuf data) {
      read.add(data.toString(java.nio.charset.StandardCharsets.UTF_8));
      how.add(metadata == null ? "buffers" : "buffers with metadata"); // (the echo sends none)
    }

    @Override
    public void onNext(Payload p) {
      how.add("payload");
      super.onNext(p);
    }
  }

  @Test
  void aSubscriberThatReadsBuffersInPlaceGetsThemWithoutAPayloadAndOwnsWhatWaited()
      throws Exception {
    ReactiveRequester echo = echo();
    for (boolean zeroCopy : new boolean[] {true, false}) {
      ReactiveRequester r =
          ReactiveRequester.of(
              echo.connection(), StreamsOptions.builder().prefetch(8).zeroCopy(zeroCopy).build());
      BufferReader reader = new BufferReader(3);
      readThreeThenTheRest(r, reader);
      assertThat(reader.how.subList(0, 3)).containsOnly("buffers");
      assertThat(reader.how.subList(3, 10)).containsOnly("payload");
      assertThat(reader.lent).hasSize(7).containsOnly(false); // owned, released by the reader
    }
  }

  @Test
  void encodedPayloadsAreSentAsTheirBytes() throws Exception {
    PayloadTest.Utf8Encoder utf8 = new PayloadTest.Utf8Encoder();
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestStream(Payload payload) {
                    payload.release();
                    return Flux.range(0, 1000).map(i -> Payload.encoded(null, "é" + i, utf8));
                  }
                }));
    List<String> got =
        Flux.from(pair.requester().requestStream(Payload.of("go")))
            .map(Payload::dataUtf8)
            .collectList()
            .block(WAIT);
    assertThat(got)
        .containsExactlyElementsOf(
            IntStream.range(0, 1000).mapToObj(i -> "é" + i).collect(Collectors.toList()));
    assertThat(utf8.encoded).hasValue(1000);
    assertThat(utf8.intoBuffers).as("written straight into the frames").hasValue(0);
  }
}
