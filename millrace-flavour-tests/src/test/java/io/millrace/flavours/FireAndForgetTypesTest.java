package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.mutiny.MutinyHandler;
import io.millrace.mutiny.MutinyRequester;
import io.millrace.mutiny.MutinyResponder;
import io.millrace.mutiny.internal.UniAnswer;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.rxjava.RxJavaHandler;
import io.millrace.rxjava.RxJavaRequester;
import io.millrace.rxjava.RxJavaResponder;
import io.millrace.rxjava.internal.CompletableAnswer;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.observers.TestObserver;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The fire-and-forget and metadata-push types each reactive flavour makes itself (a Mono over the
 * engine's Publisher, a Completable and a Uni that send on subscription) and the bridges that
 * subscribe a responder's completion: what FlavourSuiteTest's success paths do not reach. A payload
 * cancelled before it is sent must be released (pooled buffers, paranoid leak detection), a second
 * subscriber must not send it twice, and a refusal must reach the caller.
 */
class FireAndForgetTypesTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  // Lock-free: handlers add on the event loop, where a lock the test thread holds would block it.
  private final BlockingQueue<String> received = new LinkedTransferQueue<>();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  // ---- Reactor -----------------------------------------------------------------------------

  @Test
  void reactor_cancelledAtSubscription_sendsNothingAndReleasesThePayload() throws Exception {
    ReactorRequester r = ReactorRequester.of(connect(recordingReactor()));
    ByteBuf data = pooled("dropped");
    r.fireAndForget(Payload.of(data))
        .subscribe(
            new BaseSubscriber<Void>() {
              @Override
              protected void hookOnSubscribe(Subscription s) {
                cancel();
              }
            });
    assertThat(data.refCnt()).isZero();
    r.fireAndForget(Payload.of("after")).block(WAIT);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    assertThat(received).isEmpty();
  }

  @Test
  void reactor_secondSubscriber_isRefused_andTheCallIsSentOnce() throws Exception {
    ReactorRequester r = ReactorRequester.of(connect(recordingReactor()));
    Mono<Void> once = r.fireAndForget(Payload.of("once"));
    once.block(WAIT);
    StepVerifier.create(once).expectError(IllegalStateException.class).verify(WAIT);
    r.fireAndForget(Payload.of("marker")).block(WAIT);
    assertThat(take(2)).containsExactly("once", "marker");
  }

  @Test
  void reactor_invalidRequest_failsTheSubscriber_sendsNothingAndReleasesThePayload()
      throws Exception {
    ReactorRequester r = ReactorRequester.of(connect(recordingReactor()));
    ByteBuf data = pooled("dropped");
    Throwable[] failure = new Throwable[1];
    r.fireAndForget(Payload.of(data))
        .subscribe(
            new BaseSubscriber<Void>() {
              @Override
              protected void hookOnSubscribe(Subscription s) {
                s.request(0);
              }

              @Override
              protected void hookOnError(Throwable t) {
                failure[0] = t;
              }
            });
    assertThat(failure[0]).isInstanceOf(IllegalArgumentException.class);
    assertThat(data.refCnt()).isZero();
    r.fireAndForget(Payload.of("after")).block(WAIT);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    assertThat(received).isEmpty();
  }

  @Test
  void reactor_metadataPush_arrives() throws Exception {
    ReactorRequester r = ReactorRequester.of(connect(recordingReactor()));
    r.metadataPush(pooled("pushed")).block(WAIT);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("push:pushed");
  }

  @Test
  void reactor_onTheLoopOfAClosedConnection_failsWithRejected() throws Exception {
    Connection connection = connect(recordingReactor());
    ReactorRequester r = ReactorRequester.of(connection);
    ByteBuf data = pooled("late");
    Throwable failure = onLoopAfterClose(connection, () -> r.fireAndForget(Payload.of(data)));
    assertRejected(failure);
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void reactor_responderSubscribesALazyCompletion() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    Connection connection =
        connect(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Void> fireAndForget(Payload payload) {
                    payload.release();
                    return Mono.fromRunnable(ran::countDown);
                  }
                }));
    ReactorRequester.of(connection).fireAndForget(Payload.of("x")).block(WAIT);
    assertThat(ran.await(10, TimeUnit.SECONDS)).as("the handler's Mono was subscribed").isTrue();
  }

  // ---- RxJava ------------------------------------------------------------------------------

  @Test
  void rxjava_disposedAtSubscription_sendsNothingAndReleasesThePayload() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    ByteBuf data = pooled("dropped");
    TestObserver<Void> disposed = r.fireAndForget(Payload.of(data)).test(true);
    assertThat(data.refCnt()).isZero();
    disposed.assertNotComplete().assertNoErrors();
    r.fireAndForget(Payload.of("after")).blockingAwait(10, TimeUnit.SECONDS);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    assertThat(received).isEmpty();
  }

  @Test
  void rxjava_secondSubscriber_isRefused_andTheCallIsSentOnce() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    Completable once = r.fireAndForget(Payload.of("once"));
    once.test().awaitDone(10, TimeUnit.SECONDS).assertComplete();
    once.test().awaitDone(10, TimeUnit.SECONDS).assertError(IllegalStateException.class);
    r.fireAndForget(Payload.of("marker")).blockingAwait(10, TimeUnit.SECONDS);
    assertThat(take(2)).containsExactly("once", "marker");
  }

  @Test
  void rxjava_supplierForm_sendsOncePerSubscription() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    r.fireAndForget(() -> Payload.of("again")).repeat(3).blockingAwait(10, TimeUnit.SECONDS);
    assertThat(take(3)).containsExactly("again", "again", "again");
  }

  @Test
  void rxjava_metadataPush_arrives() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    r.metadataPush(pooled("pushed")).blockingAwait(10, TimeUnit.SECONDS);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("push:pushed");
  }

  @Test
  void rxjava_onTheLoopOfAClosedConnection_failsWithRejected() throws Exception {
    Connection connection = connect(recordingRxJava());
    RxJavaRequester r = RxJavaRequester.of(connection);
    ByteBuf data = pooled("late");
    Throwable failure =
        onLoopAfterClose(connection, () -> r.fireAndForget(Payload.of(data)).toFlowable());
    assertRejected(failure);
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void rxjava_responderSubscribesALazyCompletion() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    Connection connection =
        connect(
            RxJavaResponder.of(
                new RxJavaHandler() {
                  @Override
                  public Completable fireAndForget(Payload payload) {
                    payload.release();
                    return Completable.fromAction(ran::countDown);
                  }
                }));
    RxJavaRequester.of(connection)
        .fireAndForget(Payload.of("x"))
        .blockingAwait(10, TimeUnit.SECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).as("the handler's Completable ran").isTrue();
  }

  @Test
  void rxjava_aPayloadWhoseEncoderThrows_failsTheCallAndReleasesItsMetadata() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    ByteBuf metadata = pooled("meta");
    r.fireAndForget(Payload.encoded(metadata, "value", THROWING))
        .test()
        .awaitDone(10, TimeUnit.SECONDS)
        .assertError(IllegalStateException.class);
    assertThat(metadata.refCnt()).isZero();
  }

  @Test
  void rxjava_supplierGivingNull_failsTheSubscriber() throws Exception {
    RxJavaRequester r = RxJavaRequester.of(connect(recordingRxJava()));
    r.fireAndForget(() -> null)
        .test()
        .awaitDone(10, TimeUnit.SECONDS)
        .assertError(NullPointerException.class);
  }

  @Test
  void rxjava_aHandlerWhoseCompletionFails_leavesTheConnectionServing() throws Exception {
    Connection connection =
        connect(
            RxJavaResponder.of(
                new RxJavaHandler() {
                  @Override
                  public Completable fireAndForget(Payload payload) {
                    String s = payload.dataUtf8();
                    received.add(s);
                    return s.equals("fail")
                        ? Completable.error(new IllegalStateException("handler failed"))
                        : Completable.complete();
                  }
                }));
    RxJavaRequester r = RxJavaRequester.of(connection);
    r.fireAndForget(Payload.of("fail")).blockingAwait(10, TimeUnit.SECONDS);
    r.fireAndForget(Payload.of("next")).blockingAwait(10, TimeUnit.SECONDS);
    assertThat(take(2)).containsExactly("fail", "next");
  }

  @Test
  void completableAnswer_invalidRequest_failsAndDisposes() {
    AtomicBoolean disposed = new AtomicBoolean();
    AtomicReference<Throwable> error = new AtomicReference<>();
    CompletableAnswer.of(Completable.never().doOnDispose(() -> disposed.set(true)))
        .subscribe(requestingZero(error));
    assertThat(error.get())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("3.9");
    assertThat(disposed).isTrue();
    assertThat(CompletableAnswer.of(Completable.complete())).as("nothing to run").isNull();
  }

  // ---- Mutiny ------------------------------------------------------------------------------

  @Test
  void mutiny_cancelledAtSubscription_sendsNothingAndReleasesThePayload() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    ByteBuf data = pooled("dropped");
    r.fireAndForget(Payload.of(data))
        .subscribe()
        .withSubscriber(
            new UniSubscriber<Void>() {
              @Override
              public void onSubscribe(UniSubscription subscription) {
                subscription.cancel();
              }

              @Override
              public void onItem(Void item) {
                throw new AssertionError("cancelled, yet told it was sent");
              }

              @Override
              public void onFailure(Throwable failure) {
                throw new AssertionError("cancelled, yet failed", failure);
              }
            });
    assertThat(data.refCnt()).isZero();
    r.fireAndForget(Payload.of("after")).await().atMost(WAIT);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    assertThat(received).isEmpty();
  }

  @Test
  void mutiny_secondSubscriber_isRefused_andTheCallIsSentOnce() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    Uni<Void> once = r.fireAndForget(Payload.of("once"));
    once.await().atMost(WAIT);
    once.subscribe()
        .withSubscriber(UniAssertSubscriber.create())
        .awaitFailure(WAIT)
        .assertFailedWith(IllegalStateException.class);
    r.fireAndForget(Payload.of("marker")).await().atMost(WAIT);
    assertThat(take(2)).containsExactly("once", "marker");
  }

  @Test
  void mutiny_supplierForm_sendsOncePerSubscription() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    r.fireAndForget(() -> Payload.of("again"))
        .repeat()
        .atMost(3)
        .collect()
        .asList()
        .await()
        .atMost(WAIT);
    assertThat(take(3)).containsExactly("again", "again", "again");
  }

  @Test
  void mutiny_metadataPush_arrives() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    r.metadataPush(pooled("pushed")).await().atMost(WAIT);
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("push:pushed");
  }

  @Test
  void mutiny_onTheLoopOfAClosedConnection_failsWithRejected() throws Exception {
    Connection connection = connect(recordingMutiny());
    MutinyRequester r = MutinyRequester.of(connection);
    ByteBuf data = pooled("late");
    CompletableFuture<Throwable> failure = new CompletableFuture<>();
    closeAndAwait(connection);
    connection
        .executor()
        .execute(
            () ->
                r.fireAndForget(Payload.of(data))
                    .subscribe()
                    .with(v -> failure.complete(null), failure::complete));
    assertRejected(failure.get(10, TimeUnit.SECONDS));
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void mutiny_responderSubscribesALazyCompletion() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    Connection connection =
        connect(
            MutinyResponder.of(
                new MutinyHandler() {
                  @Override
                  public Uni<Void> fireAndForget(Payload payload) {
                    payload.release();
                    return Uni.createFrom()
                        .item(() -> null)
                        .invoke(ran::countDown)
                        .replaceWithVoid();
                  }
                }));
    MutinyRequester.of(connection).fireAndForget(Payload.of("x")).await().atMost(WAIT);
    assertThat(ran.await(10, TimeUnit.SECONDS)).as("the handler's Uni was subscribed").isTrue();
  }

  @Test
  void mutiny_supplierGivingNull_failsTheSubscriber() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    r.fireAndForget(() -> null)
        .subscribe()
        .withSubscriber(UniAssertSubscriber.create())
        .awaitFailure(WAIT)
        .assertFailedWith(NullPointerException.class);
  }

  @Test
  void mutiny_aPayloadWhoseEncoderThrows_failsTheCallAndReleasesItsMetadata() throws Exception {
    MutinyRequester r = MutinyRequester.of(connect(recordingMutiny()));
    ByteBuf metadata = pooled("meta");
    r.fireAndForget(Payload.encoded(metadata, "value", THROWING))
        .subscribe()
        .withSubscriber(UniAssertSubscriber.create())
        .awaitFailure(WAIT)
        .assertFailedWith(IllegalStateException.class);
    assertThat(metadata.refCnt()).isZero();
  }

  @Test
  void uniAnswer_invalidRequest_failsAndCancels() {
    AtomicBoolean cancelled = new AtomicBoolean();
    AtomicReference<Throwable> error = new AtomicReference<>();
    UniAnswer.of(
            Uni.createFrom().<Void>nothing().onCancellation().invoke(() -> cancelled.set(true)))
        .subscribe(requestingZero(error));
    assertThat(error.get())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("3.9");
    assertThat(cancelled).isTrue();
  }

  // ---- helpers -----------------------------------------------------------------------------

  /** An encoder that fails, as a message too large for its codec would. */
  private static final PayloadEncoder<String> THROWING =
      new PayloadEncoder<>() {
        @Override
        public int length(String value) {
          throw new IllegalStateException("cannot encode");
        }

        @Override
        public void encode(String value, ByteBuf out, int index, int length) {
          throw new IllegalStateException("cannot encode");
        }
      };

  private io.millrace.core.Responder recordingReactor() {
    return ReactorResponder.of(
        new ReactorHandler() {
          @Override
          public Mono<Void> fireAndForget(Payload payload) {
            received.add(payload.dataUtf8());
            return Mono.empty();
          }

          @Override
          public Mono<Void> metadataPush(Payload payload) {
            received.add("push:" + payload.metadataUtf8());
            return Mono.empty();
          }
        });
  }

  private io.millrace.core.Responder recordingRxJava() {
    return RxJavaResponder.of(
        new RxJavaHandler() {
          @Override
          public Completable fireAndForget(Payload payload) {
            received.add(payload.dataUtf8());
            return Completable.complete();
          }

          @Override
          public Completable metadataPush(Payload payload) {
            received.add("push:" + payload.metadataUtf8());
            return Completable.complete();
          }
        });
  }

  private io.millrace.core.Responder recordingMutiny() {
    return MutinyResponder.of(
        new MutinyHandler() {
          @Override
          public Uni<Void> fireAndForget(Payload payload) {
            received.add(payload.dataUtf8());
            return Uni.createFrom().voidItem();
          }

          @Override
          public Uni<Void> metadataPush(Payload payload) {
            received.add("push:" + payload.metadataUtf8());
            return Uni.createFrom().voidItem();
          }
        });
  }

  private Connection connect(io.millrace.core.Responder responder) throws Exception {
    Server server = Server.millrace(responder);
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    return client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
  }

  private static ByteBuf pooled(String s) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    b.writeCharSequence(s, StandardCharsets.UTF_8);
    return b;
  }

  private List<String> take(int n) throws InterruptedException {
    List<String> got = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String s = received.poll(10, TimeUnit.SECONDS);
      assertThat(s).as("message %d of %d", i + 1, n).isNotNull();
      got.add(s);
    }
    Thread.sleep(50); // a duplicate would arrive behind the last one
    assertThat(received).as("nothing more").isEmpty();
    return got;
  }

  private static void closeAndAwait(Connection connection) throws Exception {
    connection.dispose();
    connection.onClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Subscribes what {@code call} makes on the connection's loop after it closed; its error. */
  private static Throwable onLoopAfterClose(
      Connection connection, java.util.function.Supplier<org.reactivestreams.Publisher<Void>> call)
      throws Exception {
    closeAndAwait(connection);
    CompletableFuture<Throwable> failure = new CompletableFuture<>();
    connection
        .executor()
        .execute(
            () -> call.get().subscribe(ending(1, failure::complete, () -> failure.complete(null))));
    return failure.get(10, TimeUnit.SECONDS);
  }

  private static void assertRejected(Throwable failure) {
    assertThat(failure)
        .as("the refusal reaches the caller")
        .isInstanceOf(StreamErrorException.class);
    assertThat(((StreamErrorException) failure).errorCode()).isEqualTo(ErrorCode.REJECTED);
  }

  private static Subscriber<Void> requestingZero(AtomicReference<Throwable> error) {
    return ending(0, error::set, () -> {});
  }

  /** Requests {@code n} when subscribed and passes on how the call ended. */
  private static Subscriber<Void> ending(
      long n, java.util.function.Consumer<Throwable> onError, Runnable onComplete) {
    return new Subscriber<Void>() {
      @Override
      public void onSubscribe(Subscription s) {
        s.request(n);
      }

      @Override
      public void onNext(Void v) {}

      @Override
      public void onError(Throwable t) {
        onError.accept(t);
      }

      @Override
      public void onComplete() {
        onComplete.run();
      }
    };
  }
}
