package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.context.ContextRegistry;
import io.millrace.core.Connection;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * Reactor's automatic context propagation (what Spring's tracing turns on) restores registered
 * thread-locals from the subscriber's Context around signals that come from another thread. The
 * Reactor flavour's one-call Monos skip {@code Mono.fromDirect}'s wrapper for speed; Reactor's own
 * {@code subscribe} restores the thread-locals for a Mono made outside Reactor, so a trace id still
 * reaches code that runs on the event loop where the answer arrives.
 */
class ReactorContextPropagationTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String KEY = "millrace.test.trace";
  private static final ThreadLocal<String> TRACE = new ThreadLocal<>();

  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeAll
  static void register() {
    ContextRegistry.getInstance()
        .registerThreadLocalAccessor(KEY, TRACE::get, TRACE::set, TRACE::remove);
  }

  @AfterEach
  void close() throws Exception {
    Hooks.disableAutomaticContextPropagation();
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void requestResponse_seesTheSubscribersThreadLocal_onTheEventLoop() throws Exception {
    ReactorRequester requester = ReactorRequester.of(connect());
    Hooks.enableAutomaticContextPropagation();
    assertThat(answerSeenWith(requester, "trace-1")).isEqualTo("trace-1 on the loop");
  }

  @Test
  void fireAndForget_seesTheSubscribersThreadLocal_whenItCompletesOnTheEventLoop()
      throws Exception {
    ReactorRequester requester = ReactorRequester.of(connect());
    Hooks.enableAutomaticContextPropagation();
    String seen =
        Mono.fromRunnable(() -> {})
            .then(requester.fireAndForget(Payload.of("hi")))
            .then(Mono.fromCallable(() -> String.valueOf(TRACE.get())))
            .contextWrite(Context.of(KEY, "trace-2"))
            .block(WAIT);
    assertThat(seen).isEqualTo("trace-2");
  }

  @Test
  void withoutThePropagation_theLoopSeesNoThreadLocal() throws Exception {
    ReactorRequester requester = ReactorRequester.of(connect());
    assertThat(answerSeenWith(requester, "trace-3")).isEqualTo("null on the loop");
  }

  @Test
  void aChannelsPayloads_seeTheContextOfTheChannelsSubscriber() throws Exception {
    ReactorRequester requester = ReactorRequester.of(connect());
    Flux<Payload> payloads =
        Flux.deferContextual(
            context ->
                Flux.just(
                    Payload.of("first " + context.getOrDefault(KEY, "none")),
                    Payload.of("second " + context.getOrDefault(KEY, "none"))));
    List<String> echoed =
        requester
            .requestChannel(payloads)
            .map(Payload::dataUtf8)
            .contextWrite(Context.of(KEY, "trace-4"))
            .collectList()
            .block(WAIT);
    assertThat(echoed).containsExactly("first trace-4", "second trace-4");
    // Without a Context of its own, a channel's payloads see none.
    assertThat(requester.requestChannel(payloads).map(Payload::dataUtf8).collectList().block(WAIT))
        .containsExactly("first none", "second none");
  }

  /** What the code mapping a request-response's answer sees, with {@code trace} in the Context. */
  private static String answerSeenWith(ReactorRequester requester, String trace) {
    return requester
        .requestResponse(Payload.of("hi"))
        .map(ReactorContextPropagationTest::whereAndWhat)
        .contextWrite(Context.of(KEY, trace))
        .block(WAIT);
  }

  /** The thread-local's value and whether this runs on the client's event loop. */
  private static String whereAndWhat(Payload p) {
    try {
      boolean loop = !Thread.currentThread().getName().equals("main");
      return TRACE.get() + (loop ? " on the loop" : " on " + Thread.currentThread().getName());
    } finally {
      p.release();
    }
  }

  private Connection connect() throws Exception {
    Server server = Server.millrace(ReactorResponder.of(new ReactorEcho(new Probe())));
    closing.add(server);
    MillraceClient client =
        MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    closing.add(0, client::shutdownNow);
    return client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
  }
}
