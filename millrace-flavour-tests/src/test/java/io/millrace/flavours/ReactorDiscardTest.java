package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.reactor.internal.DirectAnswer;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Payloads that Reactor drops before they reach Millrace (a {@code Mono.just} cancelled before it
 * was asked for, an item {@code delayElement} holds when the call is cancelled, an item {@code
 * filter} rejects) are released by the application's own {@code doOnDiscard(Payload.class,
 * Payload::release)}, which reaches through Millrace's subscribers on every path (a stream's and a
 * request-response's answer, a channel's payloads at the caller); and Millrace itself releases
 * nothing that Reactor drops, so a received payload a handler passes through {@code then()} and
 * keeps stays readable.
 */
class ReactorDiscardTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closing = new ArrayList<>();

  /** The buffers the handler made, to check that each was released. */
  private final List<ByteBuf> made = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void aKnownStreamAnswer_cancelledBeforeItWasAskedFor_isReleased() {
    Payload p = pooled("never asked for");
    Publisher<Payload> answer = DirectAnswer.of(Flux.just(p).doOnDiscard(Payload.class, RELEASE));
    answer.subscribe(
        new Subscriber<>() {
          @Override
          public void onSubscribe(Subscription s) {
            s.cancel();
          }

          @Override
          public void onNext(Payload payload) {
            throw new AssertionError("not asked for");
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onComplete() {}
        });
    assertThat(made.get(0).refCnt()).isZero();
  }

  @Test
  void aStreamItemHeldByTheHandlersOperators_isReleasedWhenTheCallerCancels() throws Exception {
    CountDownLatch handled = new CountDownLatch(1);
    ReactorRequester requester =
        connect(
            new ReactorHandler() {
              @Override
              public Flux<Payload> requestStream(Payload payload) {
                handled.countDown();
                return Mono.just(pooled("late"))
                    .delayElement(Duration.ofMinutes(1))
                    .flux()
                    .doOnDiscard(Payload.class, RELEASE);
              }
            });
    Disposable call = requester.requestStream(Payload.of("go")).subscribe();
    assertThat(handled.await(10, TimeUnit.SECONDS)).isTrue();
    call.dispose(); // CANCEL: delayElement drops what it holds
    awaitAllReleased();
  }

  @Test
  void aRequestResponseAnswerHeldByTheHandlersOperators_isReleasedWhenTheCallerCancels()
      throws Exception {
    CountDownLatch handled = new CountDownLatch(1);
    ReactorRequester requester =
        connect(
            new ReactorHandler() {
              @Override
              public Mono<Payload> requestResponse(Payload payload) {
                handled.countDown();
                return Mono.just(pooled("late"))
                    .delayElement(Duration.ofMinutes(1))
                    .doOnDiscard(Payload.class, RELEASE);
              }
            });
    Disposable call = requester.requestResponse(Payload.of("go")).subscribe();
    assertThat(handled.await(10, TimeUnit.SECONDS)).isTrue();
    call.dispose();
    awaitAllReleased();
  }

  @Test
  void streamItemsTheHandlerFiltersOut_areReleased_andTheRestArrive() throws Exception {
    ReactorRequester requester =
        connect(
            new ReactorHandler() {
              @Override
              public Flux<Payload> requestStream(Payload payload) {
                return Flux.range(0, 6)
                    .map(i -> pooled(Integer.toString(i)))
                    .filter(p -> Integer.parseInt(p.dataUtf8()) % 2 == 0)
                    .doOnDiscard(Payload.class, RELEASE);
              }
            });
    List<String> received =
        requester.requestStream(Payload.of("go")).map(Payload::dataUtf8).collectList().block(WAIT);
    assertThat(received).containsExactly("0", "2", "4");
    awaitAllReleased();
    assertThat(made).hasSize(6);
  }

  @Test
  void aChannelPayloadHeldByTheCallersOperators_isReleasedWhenTheCallerCancels() throws Exception {
    ReactorRequester requester = connect(new ReactorEcho(new Probe()));
    Flux<Payload> payloads =
        Flux.just(Payload.of("first"))
            .concatWith(Mono.just(pooled("late")).delayElement(Duration.ofMinutes(1)));
    String first =
        requester
            .requestChannel(payloads)
            .map(Payload::dataUtf8)
            .next()
            .doOnDiscard(Payload.class, RELEASE) // the caller's, below the channel
            .block(WAIT);
    assertThat(first).isEqualTo("first");
    awaitAllReleased();
  }

  @Test
  void aReceivedPayloadAHandlerPassesThroughThen_isNotReleasedByMillrace() throws Exception {
    List<Payload> kept = new CopyOnWriteArrayList<>();
    CountDownLatch handled = new CountDownLatch(1);
    ReactorRequester requester =
        connect(
            new ReactorHandler() {
              @Override
              public Mono<Void> fireAndForget(Payload payload) {
                return Mono.just(payload)
                    .doOnNext(kept::add)
                    .doFinally(s -> handled.countDown())
                    .then(); // then() discards the payload it ignores
              }

              @Override
              public Flux<Payload> requestStream(Payload payload) {
                return Flux.just(payload).doOnNext(kept::add).thenMany(Flux.empty());
              }
            });
    requester.fireAndForget(Payload.of("metadata 1", "data 1")).block(WAIT);
    assertThat(handled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(
            requester.requestStream(Payload.of("metadata 2", "data 2")).collectList().block(WAIT))
        .isEmpty();
    assertThat(kept).hasSize(2);
    assertThat(kept.get(0).metadataUtf8()).isEqualTo("metadata 1");
    assertThat(kept.get(1).metadataUtf8()).isEqualTo("metadata 2");
    assertThat(kept.get(1).dataUtf8()).isEqualTo("data 2");
  }

  /** What a handler that makes payloads on pooled buffers gives {@code doOnDiscard}. */
  private static final Consumer<Payload> RELEASE = Payload::release;

  /** A payload on a pooled direct buffer, which only a release gives back. */
  private Payload pooled(String text) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    b.writeCharSequence(text, StandardCharsets.UTF_8);
    made.add(b);
    return Payload.of(b);
  }

  private void awaitAllReleased() throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (made.isEmpty() || made.stream().anyMatch(b -> b.refCnt() > 0)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "not released: " + made.stream().filter(b -> b.refCnt() > 0).count() + " buffers");
      }
      Thread.sleep(5);
    }
  }

  private ReactorRequester connect(ReactorHandler handler) throws Exception {
    Server server = Server.millrace(ReactorResponder.of(handler));
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    Connection connection = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    return ReactorRequester.of(connection);
  }
}
