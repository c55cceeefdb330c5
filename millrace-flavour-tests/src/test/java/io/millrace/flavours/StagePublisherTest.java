package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.futures.internal.StagePublisher;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The futures flavour's {@link StagePublisher} without sockets, in the orders its ends can come:
 * the value before and after the request, a failure with no request, an invalid request before and
 * after the value, a cancel before and after it. Every value is released exactly once or delivered.
 */
class StagePublisherTest {
  private final ByteBuf data = Unpooled.buffer().writeInt(7);
  private final Payload value = Payload.of(data);
  private final CompletableFuture<Payload> future = new CompletableFuture<>();
  private final Recorder subscriber = new Recorder();

  /** Records every signal in order. */
  static final class Recorder implements Subscriber<Payload> {
    final List<String> signals = new ArrayList<>();
    Subscription subscription;

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      signals.add("subscribe");
    }

    @Override
    public void onNext(Payload p) {
      signals.add("next");
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error " + t.getClass().getSimpleName() + ": " + t.getMessage());
    }

    @Override
    public void onComplete() {
      signals.add("complete");
    }
  }

  private void subscribe() {
    new StagePublisher(future).subscribe(subscriber);
  }

  @Test
  void valueBeforeTheRequest_deliveredOnTheRequest() {
    subscribe();
    future.complete(value);
    assertThat(subscriber.signals).containsExactly("subscribe");
    subscriber.subscription.request(1);
    assertThat(subscriber.signals).containsExactly("subscribe", "next", "complete");
    assertThat(data.refCnt()).as("delivered: the subscriber's now").isOne();
  }

  @Test
  void valueAfterTheRequest_deliveredWhenItComes() {
    subscribe();
    subscriber.subscription.request(1);
    future.complete(value);
    assertThat(subscriber.signals).containsExactly("subscribe", "next", "complete");
  }

  @Test
  void aNullValue_completesWithNothing() {
    subscribe();
    subscriber.subscription.request(1);
    future.complete(null);
    assertThat(subscriber.signals).containsExactly("subscribe", "complete");
  }

  @Test
  void failureWithoutARequest_signalledAtOnce() {
    subscribe();
    future.completeExceptionally(new IllegalStateException("no"));
    assertThat(subscriber.signals).containsExactly("subscribe", "error IllegalStateException: no");
  }

  @Test
  void aStageFailedBeforeTheSubscription_failsRightAfterOnSubscribe() {
    future.completeExceptionally(new IllegalStateException("no"));
    subscribe();
    assertThat(subscriber.signals).containsExactly("subscribe", "error IllegalStateException: no");
  }

  @Test
  void invalidRequestBeforeTheValue_failsCancelsTheStage_andTheValueIsReleasedOnArrival() {
    subscribe();
    subscriber.subscription.request(0);
    assertThat(subscriber.signals).hasSize(2).last().asString().contains("rule 3.9");
    assertThat(future).isCancelled();
    assertThat(future.complete(value)).as("a cancelled future takes nothing").isFalse();
    value.release(); // (the handler's own, as FutureHandler documents)
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void invalidRequestAfterTheValueArrived_failsAndReleasesIt() {
    subscribe();
    future.complete(value);
    subscriber.subscription.request(-1);
    assertThat(subscriber.signals).hasSize(2).last().asString().contains("rule 3.9");
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void invalidRequestAfterTheEnd_nothingMore() {
    subscribe();
    subscriber.subscription.request(1);
    future.complete(value);
    subscriber.subscription.request(0);
    assertThat(subscriber.signals).containsExactly("subscribe", "next", "complete");
  }

  @Test
  void cancelBeforeTheValue_cancelsTheStage_noSignal() {
    subscribe();
    subscriber.subscription.request(1);
    subscriber.subscription.cancel();
    assertThat(future).isCancelled();
    assertThat(subscriber.signals).containsExactly("subscribe");
  }

  @Test
  void cancelAfterTheValueArrivedUnrequested_releasesIt() {
    subscribe();
    future.complete(value);
    subscriber.subscription.cancel();
    subscriber.subscription.request(1);
    assertThat(subscriber.signals).containsExactly("subscribe");
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void aStageThatIsNotAFuture_cancelledAll_theSameValueReleasedWhenItComes() {
    CompletableFuture<Payload> source = new CompletableFuture<>();
    new StagePublisher(source.minimalCompletionStage()).subscribe(subscriber);
    subscriber.subscription.cancel();
    source.complete(value);
    assertThat(data.refCnt()).isZero();
    assertThat(subscriber.signals).containsExactly("subscribe");
  }
}
