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
    AnsweredAtOnce<StringValue> answer = AnsweredAtOnce.of(() -> text("late"));
    List<Object> signals = new CopyOnWriteArrayList<>();
    Subscription subscription = subscribeWithoutAsking(TestService.echoContext(), answer, signals);
    assertThat(signals).isEmpty();
    subscription.request(1);
    assertThat(signals).containsExactly(text("late"), "complete");
    assertThat(answer.subscriptions()).isZero();
  }

  /**
   * A handler that ran on an executor has its answer taken on its own thread, not on the event loop
   * when the caller asks there: a Mono.fromCallable that blocks stays off the loop.
   */
  @Test
  void aHandlerOffTheLoop_hasItsAnswerTakenOnItsOwnThread() throws Exception {
    io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
    try {
      ServerContext context = TestService.echoContext(loop);
      List<Thread> ranOn = new CopyOnWriteArrayList<>();
      AnsweredAtOnce<StringValue> answer =
          AnsweredAtOnce.of(
              () -> {
                ranOn.add(Thread.currentThread());
                return text("from the executor");
              });
      List<Object> signals = new CopyOnWriteArrayList<>();
      Subscription subscription = subscribeWithoutAsking(context, answer, signals);
      assertThat(ranOn).containsExactly(Thread.currentThread());
      loop.submit(() -> subscription.request(1)).get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(ranOn).hasSize(1);
      assertThat(signals).containsExactly(text("from the executor"), "complete");

      // A failure taken the same way reaches the caller as its status.
      AnsweredAtOnce<StringValue> failing =
          AnsweredAtOnce.of(
              () -> {
                throw Status.of(Status.Code.NOT_FOUND).withMessage("no such").asException();
              });
      List<Object> failed = new CopyOnWriteArrayList<>();
      Subscription s2 = subscribeWithoutAsking(context, failing, failed);
      loop.submit(() -> s2.request(1)).get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(failed).hasSize(2).last().isEqualTo("complete");
      assertThat(failed.get(0)).isEqualTo("trailer NOT_FOUND");
    } finally {
      loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  /**
   * Subscribes a recorder to a unary ResponsePublisher of {@code answer} that asks for nothing in
   * onSubscribe; returns its subscription. Messages are recorded parsed, trailers by status.
   */
  private static Subscription subscribeWithoutAsking(
      ServerContext context, AnsweredAtOnce<StringValue> answer, List<Object> signals) {
    ResponsePublisher<StringValue> publisher =
        new ResponsePublisher<>(
            context,
            TestService.ECHO.responseMarshaller(),
            true,
            false,
            ByteBufAllocator.DEFAULT,
            answer,
            () -> {});
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
              if (p.hasMetadata() && ResponseMetadata.decode(p.metadata(), 8192).noMessage()) {
                signals.add(
                    "trailer " + ResponseMetadata.decode(p.metadata(), 8192).status().code());
              } else {
                signals.add(TestService.ECHO.responseMarshaller().parse(p.data()));
              }
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
    return subscription[0];
  }
}
