package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.testing.AnsweredAtOnce;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@link AnsweredCall} without a connection: what the caller's subscriber sees for each outcome of
 * an answer given at once, when the answer is taken, and the Reactive Streams rules it keeps.
 */
class AnsweredCallTest {
  private final ServerContext context = TestService.echoContext();
  private final AtomicInteger taken = new AtomicInteger();
  private final AtomicInteger done = new AtomicInteger();

  /** The answer {@code answer} gives, counting the times it is taken. */
  private AnsweredCall<StringValue> call(Callable<StringValue> answer, boolean routing) {
    Publisher<StringValue> scalar =
        AnsweredAtOnce.of(
            () -> {
              taken.incrementAndGet();
              return answer.call();
            });
    assertThat(AnsweredCall.fits(context, scalar)).isTrue();
    return new AnsweredCall<>(
        context,
        TestService.ECHO.responseMarshaller(),
        routing,
        ByteBufAllocator.DEFAULT,
        scalar,
        done::incrementAndGet);
  }

  /** Records signals; releases payloads after noting the message or the trailer's status. */
  private static final class Recorder implements Subscriber<Payload> {
    final List<String> signals = new CopyOnWriteArrayList<>();
    Subscription subscription;

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      signals.add("subscribed");
    }

    @Override
    public void onNext(Payload p) {
      try {
        if (p.hasMetadata() && ResponseMetadata.decode(p.metadata(), 8192).noMessage()) {
          signals.add("trailer " + ResponseMetadata.decode(p.metadata(), 8192).status().code());
        } else {
          signals.add(
              "message " + TestService.ECHO.responseMarshaller().parse(p.data()).getValue());
        }
      } finally {
        p.release();
      }
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error " + t);
    }

    @Override
    public void onComplete() {
      signals.add("complete");
    }
  }

  @Test
  void theAnswer_isTakenOnTheFirstRequest_andNotBefore() {
    AnsweredCall<StringValue> call = call(() -> text("hi"), false);
    Recorder r = new Recorder();
    call.subscribe(r);
    assertThat(taken).hasValue(0);
    assertThat(r.signals).containsExactly("subscribed");
    r.subscription.request(1);
    r.subscription.request(1); // nothing more to give
    assertThat(taken).hasValue(1);
    assertThat(r.signals).containsExactly("subscribed", "message hi", "complete");
    assertThat(done).hasValue(1);
  }

  @Test
  void aFailure_isATrailerWithItsStatus_orAnApplicationErrorForRoutingCallers() {
    Callable<StringValue> failing =
        () -> {
          throw Status.of(Status.Code.NOT_FOUND).withMessage("no such").asException();
        };
    Recorder r = new Recorder();
    call(failing, false).subscribe(r);
    r.subscription.request(1);
    assertThat(r.signals).containsExactly("subscribed", "trailer NOT_FOUND", "complete");

    Recorder routed = new Recorder();
    call(failing, true).subscribe(routed);
    routed.subscription.request(1);
    assertThat(routed.signals)
        .containsExactly(
            "subscribed", "error " + StreamErrorException.application("NOT_FOUND: no such"));
    assertThat(StreamErrorException.application("x").errorCode())
        .isEqualTo(ErrorCode.APPLICATION_ERROR);
  }

  @Test
  void noValue_isInternal() {
    Recorder r = new Recorder();
    call(() -> null, false).subscribe(r);
    r.subscription.request(1);
    assertThat(r.signals).containsExactly("subscribed", "trailer INTERNAL", "complete");
  }

  @Test
  void aMessageThatWillNotSerialize_endsTheCallWithInternal() {
    Marshaller<StringValue> broken =
        new Marshaller<>() {
          @Override
          public io.netty.buffer.ByteBuf serialize(StringValue value, ByteBufAllocator alloc) {
            throw Status.INTERNAL.withMessage("could not serialize").asException();
          }

          @Override
          public StringValue parse(io.netty.buffer.ByteBuf data) {
            throw new UnsupportedOperationException();
          }
        };
    AnsweredCall<StringValue> call =
        new AnsweredCall<>(
            context,
            broken,
            false,
            ByteBufAllocator.DEFAULT,
            AnsweredAtOnce.of(() -> text("hi")),
            done::incrementAndGet);
    Recorder r = new Recorder();
    call.subscribe(r);
    r.subscription.request(1);
    assertThat(r.signals).containsExactly("subscribed", "trailer INTERNAL", "complete");
    assertThat(done).hasValue(1);
  }

  @Test
  void aCancelBeforeTheRequest_cancelsTheContext_andTheAnswerIsNeverTaken() {
    AnsweredCall<StringValue> call = call(() -> text("hi"), false);
    Recorder r = new Recorder();
    call.subscribe(r);
    r.subscription.cancel();
    r.subscription.request(1);
    r.subscription.cancel();
    assertThat(taken).hasValue(0);
    assertThat(context.isCancelled()).isTrue();
    assertThat(r.signals).containsExactly("subscribed");
    assertThat(done).hasValue(1);
  }

  @Test
  void aNonPositiveRequest_failsTheSubscriber_rule3_9() {
    AnsweredCall<StringValue> call = call(() -> text("hi"), false);
    Recorder r = new Recorder();
    call.subscribe(r);
    r.subscription.request(0);
    assertThat(taken).hasValue(0);
    assertThat(r.signals).hasSize(2);
    assertThat(r.signals.get(1)).startsWith("error java.lang.IllegalArgumentException");
    assertThat(done).hasValue(1);
  }

  @Test
  void anOkStatusThrown_endsTheCallWithoutAResponse_asAResponsePublisherDoes() {
    Callable<StringValue> ok =
        () -> {
          throw Status.OK.asException();
        };
    Recorder r = new Recorder();
    call(ok, false).subscribe(r);
    r.subscription.request(1);
    assertThat(r.signals).containsExactly("subscribed", "complete");
    Recorder routed = new Recorder();
    call(ok, true).subscribe(routed);
    routed.subscription.request(1);
    assertThat(routed.signals).containsExactly("subscribed", "complete");
  }

  /**
   * A handler that ran on an executor keeps the ResponsePublisher, so its answer is taken there.
   */
  @Test
  void aHandlerOffTheEventLoop_doesNotFit() throws Exception {
    io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
    try {
      ServerContext onALoop = TestService.echoContext(loop);
      Publisher<StringValue> scalar = AnsweredAtOnce.of(() -> text("hi"));
      assertThat(AnsweredCall.fits(onALoop, scalar)).isFalse();
      assertThat(loop.submit(() -> AnsweredCall.fits(onALoop, scalar)).get()).isTrue();
    } finally {
      loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  @Test
  void aSecondSubscriber_isRefused_andTheFirstStillAnswered() {
    AnsweredCall<StringValue> call = call(() -> text("hi"), false);
    Recorder first = new Recorder();
    Recorder second = new Recorder();
    call.subscribe(first);
    call.subscribe(second);
    assertThat(second.signals).hasSize(2);
    assertThat(second.signals.get(1)).startsWith("error java.lang.IllegalStateException");
    first.subscription.request(1);
    assertThat(first.signals).containsExactly("subscribed", "message hi", "complete");
  }
}
