package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.StreamErrorException;
import io.millrace.mutiny.MutinyRequester;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The Mutiny requester's request-response Uni ({@code AnswerUni}): the answer, an empty answer as a
 * null item, a failure, a cancel that reaches the responder, one subscriber per call, and a new
 * call per subscription for the Supplier form.
 */
class MutinyRequesterTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final AtomicInteger calls = new AtomicInteger();
  private final CountDownLatch cancelled = new CountDownLatch(1);

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void theAnswer_anEmptyAnswer_andAFailure() throws Exception {
    MutinyRequester requester = connect();
    assertThat(text(requester.requestResponse(Payload.of("echo")).await().atMost(WAIT)))
        .isEqualTo("echo");
    assertThat(requester.requestResponse(Payload.of("empty")).await().atMost(WAIT)).isNull();
    assertThatThrownBy(() -> requester.requestResponse(Payload.of("fail")).await().atMost(WAIT))
        .isInstanceOf(StreamErrorException.class)
        .hasMessageContaining("refused");
  }

  @Test
  void aCancelBeforeTheAnswer_reachesTheResponder() throws Exception {
    MutinyRequester requester = connect();
    UniAssertSubscriber<Payload> s =
        requester
            .requestResponse(Payload.of("never"))
            .subscribe()
            .withSubscriber(new UniAssertSubscriber<>());
    awaitCalls(1);
    s.cancel();
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the responder's Mono cancelled").isTrue();
    assertThat(s.getItem()).isNull();
    assertThat(s.getFailure()).isNull();
  }

  @Test
  void aCallHasOneSubscriber_andTheSupplierFormMakesACallPerSubscription() throws Exception {
    MutinyRequester requester = connect();
    Uni<Payload> once = requester.requestResponse(Payload.of("echo"));
    assertThat(text(once.await().atMost(WAIT))).isEqualTo("echo");
    assertThatThrownBy(() -> once.await().atMost(WAIT)).hasMessageContaining("one subscriber");

    AtomicInteger made = new AtomicInteger();
    Uni<Payload> each =
        requester.requestResponse(() -> Payload.of("echo " + made.incrementAndGet()));
    assertThat(text(each.await().atMost(WAIT))).isEqualTo("echo 1");
    assertThat(text(each.await().atMost(WAIT))).isEqualTo("echo 2");
  }

  private void awaitCalls(int n) throws InterruptedException {
    for (int i = 0; i < 1_000 && calls.get() < n; i++) {
      Thread.sleep(10);
    }
    assertThat(calls.get()).isEqualTo(n);
  }

  private static String text(Payload p) {
    try {
      return p.dataUtf8();
    } finally {
      p.release();
    }
  }

  private MutinyRequester connect() throws Exception {
    Server server =
        Server.millrace(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Payload> requestResponse(Payload payload) {
                    calls.incrementAndGet();
                    String text = payload.dataUtf8();
                    payload.release();
                    return switch (text) {
                      case "empty" -> Mono.empty();
                      case "fail" -> Mono.error(StreamErrorException.application("refused"));
                      case "never" -> Mono.<Payload>never().doOnCancel(cancelled::countDown);
                      default -> Mono.just(Payload.of(text));
                    };
                  }
                }));
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    return MutinyRequester.of(client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS));
  }
}
