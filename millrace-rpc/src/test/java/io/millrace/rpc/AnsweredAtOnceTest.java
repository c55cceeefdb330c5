package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.millrace.streams.Payload;
import io.millrace.testing.AnsweredAtOnce;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;

/**
 * A unary handler whose answer is known when it returns (Reactor's {@code Mono.just}, {@code
 * Mono.fromCallable}, {@code Mono.error}: a Publisher that is also a Callable) is answered by a
 * call, not a subscription, with the same outcomes: the value, a failure's status, and INTERNAL for
 * no value.
 */
class AnsweredAtOnceTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final List<AnsweredAtOnce<StringValue>> answers = new CopyOnWriteArrayList<>();
  private RpcOverTcp tcp;
  private RpcClient rpc;

  /** "empty": no value; "fail": NOT_FOUND; anything else: echoed. */
  private AnsweredAtOnce<StringValue> answer(StringValue request) {
    AnsweredAtOnce<StringValue> a =
        AnsweredAtOnce.of(
            () ->
                switch (request.getValue()) {
                  case "empty" -> null;
                  case "fail" ->
                      throw Status.of(Status.Code.NOT_FOUND).withMessage("no such").asException();
                  default -> request;
                });
    answers.add(a);
    return a;
  }

  @BeforeEach
  void start() throws Exception {
    ServiceDefinition service =
        ServiceDefinition.builder(TestService.NAME)
            .method(TestService.ECHO, (request, context) -> answer(request))
            .build();
    tcp = RpcOverTcp.serve(RpcServer.builder().service(service).build());
    rpc = tcp.client();
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private StringValue call(String text, CallOptions options) {
    return Mono.from(rpc.unary(TestService.ECHO, text(text), options)).block(WAIT);
  }

  private static Status statusOf(Throwable t) {
    assertThat(t).isInstanceOf(StatusException.class);
    return ((StatusException) t).status();
  }

  @Test
  void theValue_isTheResponse_withoutASubscription() {
    assertThat(call("hi", CallOptions.DEFAULT)).isEqualTo(text("hi"));
    assertThat(answers).hasSize(1);
    assertThat(answers.get(0).subscriptions()).isZero();
  }

  @Test
  void aThrownStatus_endsTheCallWithIt() {
    assertThatThrownBy(() -> call("fail", CallOptions.DEFAULT))
        .satisfies(
            t -> {
              assertThat(statusOf(t).code()).isEqualTo(Status.Code.NOT_FOUND);
              assertThat(statusOf(t).message()).isEqualTo("no such");
            });
    assertThat(answers.get(0).subscriptions()).isZero();
  }

  @Test
  void noValue_isInternal() {
    assertThatThrownBy(() -> call("empty", CallOptions.DEFAULT))
        .satisfies(t -> assertThat(statusOf(t).code()).isEqualTo(Status.Code.INTERNAL));
    assertThat(answers.get(0).subscriptions()).isZero();
  }

  @Test
  void aCallWithADeadline_isAnsweredTheSameWay() {
    CallOptions withDeadline = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30));
    assertThat(call("hi", withDeadline)).isEqualTo(text("hi"));
    assertThatThrownBy(() -> call("fail", withDeadline))
        .satisfies(t -> assertThat(statusOf(t).code()).isEqualTo(Status.Code.NOT_FOUND));
    assertThat(answers).allSatisfy(a -> assertThat(a.subscriptions()).isZero());
  }

  /** The answer waits for demand when the engine's subscriber has not asked in onSubscribe. */
  @Test
  void anAnswerWaitsForDemand_andGoesOnTheFirstRequest() {
    ServerContext context = TestService.echoContext();
    AnsweredAtOnce<StringValue> answer = AnsweredAtOnce.of(() -> text("late"));
    ResponsePublisher<StringValue> publisher =
        new ResponsePublisher<>(
            context,
            TestService.ECHO.responseMarshaller(),
            true,
            false,
            ByteBufAllocator.DEFAULT,
            answer,
            () -> {});
    List<Object> signals = new CopyOnWriteArrayList<>();
    Subscription[] subscription = new Subscription[1];
    publisher.subscribe(
        new Subscriber<Payload>() {
          @Override
          public void onSubscribe(Subscription s) {
            subscription[0] = s;
          }

          @Override
          public void onNext(Payload p) {
            try {
              signals.add(TestService.ECHO.responseMarshaller().parse(p.data()));
            } finally {
              p.release();
            }
          }

          @Override
          public void onError(Throwable t) {
            signals.add(t);
          }

          @Override
          public void onComplete() {
            signals.add("complete");
          }
        });
    assertThat(signals).isEmpty();
    subscription[0].request(1);
    assertThat(signals).containsExactly(text("late"), "complete");
    assertThat(answer.subscriptions()).isZero();
  }
}
