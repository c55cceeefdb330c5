package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.reactor.internal.DirectAnswer;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * A Reactor responder's request-response answers that are known when the handler returns ({@code
 * Mono.just}, {@code Mono.fromCallable}, {@code Mono.fromSupplier}, {@code Mono.error}, {@code
 * Mono.empty}) are taken by a call instead of a subscription: each is taken once, with its outcome,
 * and an {@code onLastOperator} hook that would wrap the answer still sees it subscribed.
 */
class ReactorKnownAnswersTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    Hooks.resetOnLastOperator("test");
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void eachKindOfKnownAnswer_isTakenOncePerCall_withItsOutcome() throws Exception {
    AtomicInteger called = new AtomicInteger();
    ReactorRequester requester =
        answering(
            kind ->
                switch (kind) {
                  case "callable" ->
                      Mono.fromCallable(() -> Payload.of("call " + called.incrementAndGet()));
                  case "supplier" ->
                      Mono.fromSupplier(() -> Payload.of("supply " + called.incrementAndGet()));
                  case "failing" ->
                      Mono.fromCallable(
                          () -> {
                            called.incrementAndGet();
                            throw new IllegalStateException("no");
                          });
                  case "error" -> Mono.error(StreamErrorException.application("refused"));
                  case "empty" -> Mono.empty();
                  default -> Mono.just(Payload.of("just " + kind));
                });
    assertThat(answer(requester, "callable")).isEqualTo("call 1");
    assertThat(answer(requester, "callable")).isEqualTo("call 2");
    assertThat(answer(requester, "supplier")).isEqualTo("supply 3");
    assertThat(answer(requester, "x")).isEqualTo("just x");
    assertThat(answer(requester, "empty")).isNull();
    assertThatThrownBy(() -> answer(requester, "failing")).isInstanceOf(StreamErrorException.class);
    assertThat(called).hasValue(4); // the failing callable too, once
    assertThatThrownBy(() -> answer(requester, "error"))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
  }

  @Test
  void aKnownAnswerIsCalled_notSubscribed_unlessAnOnLastOperatorHookWouldWrapIt() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    ReactorRequester requester = answering(request -> new Known("known", subscribed));
    assertThat(answer(requester, "x")).isEqualTo("known");
    assertThat(subscribed).hasValue(0);
    Hooks.onLastOperator("test", Operators.lift((operator, subscriber) -> subscriber));
    assertThat(answer(requester, "x")).isEqualTo("known");
    assertThat(subscribed).hasValue(1); // through the hook's operator
  }

  @Test
  void anErrorThatIsNotAnException_comesOutOfTheCallAsItself() {
    AssertionError error = new AssertionError("x");
    Publisher<Payload> answer = DirectAnswer.of(Mono.error(error));
    assertThat(answer).isInstanceOf(Callable.class);
    assertThatThrownBy(() -> ((Callable<?>) answer).call()).isSameAs(error);
  }

  @Test
  void anExceptionWrappedByTheHandlerItself_staysAsASubscriptionWouldSignalIt() {
    RuntimeException wrapped = Exceptions.propagate(new java.io.IOException("x"));
    Publisher<Payload> answer = DirectAnswer.of(Mono.error(wrapped));
    assertThatThrownBy(() -> ((Callable<?>) answer).call()).isSameAs(wrapped);
  }

  /** A Mono known at once, like Mono.just, that counts its subscriptions. */
  private static final class Known extends Mono<Payload> implements Callable<Payload> {
    private final String text;
    private final AtomicInteger subscribed;

    Known(String text, AtomicInteger subscribed) {
      this.text = text;
      this.subscribed = subscribed;
    }

    @Override
    public Payload call() {
      return Payload.of(text);
    }

    @Override
    public void subscribe(CoreSubscriber<? super Payload> actual) {
      subscribed.incrementAndGet();
      Mono.just(Payload.of(text)).subscribe(actual);
    }
  }

  private static String answer(ReactorRequester requester, String request) {
    Payload p = requester.requestResponse(Payload.of(request)).block(WAIT);
    if (p == null) {
      return null;
    }
    try {
      return p.dataUtf8();
    } finally {
      p.release();
    }
  }

  /**
   * A requester connected to a Reactor server answering each request's text with {@code answer}.
   */
  private ReactorRequester answering(Function<String, Mono<Payload>> answer) throws Exception {
    return ReactorRequester.of(
        connect(
            new ReactorHandler() {
              @Override
              public Mono<Payload> requestResponse(Payload payload) {
                String request = payload.dataUtf8();
                payload.release();
                return answer.apply(request);
              }
            }));
  }

  private Connection connect(ReactorHandler handler) throws Exception {
    Server server = Server.millrace(ReactorResponder.of(handler));
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    return client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
  }
}
