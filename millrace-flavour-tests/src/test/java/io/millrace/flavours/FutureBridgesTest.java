package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.futures.internal.FutureSubscriber;
import io.millrace.futures.internal.StagePublisher;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.Payloads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

/** The futures flavour's bridges to the streams layer release what nobody will take. */
class FutureBridgesTest {
  @Test
  void aHandlersAnswer_cancelledBeforeItWasAskedFor_isReleased() {
    // A handler on an executor answered at once, but the call was cancelled (the peer's CANCEL,
    // the connection gone) before the engine asked for the answer.
    ByteBuf data = Unpooled.directBuffer().writeByte(1);
    Payloads.cancelUnread(new StagePublisher(CompletableFuture.completedFuture(Payload.of(data))));
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void aHandlersLaterAnswer_cancelledBeforeItWasAskedFor_isReleasedWhenItComes() {
    ByteBuf data = Unpooled.directBuffer().writeByte(1);
    CompletableFuture<Payload> later = new CompletableFuture<>();
    // Not a CompletableFuture to the publisher: it cannot cancel it, so the value still comes.
    Payloads.cancelUnread(new StagePublisher(later.minimalCompletionStage()));
    later.complete(Payload.of(data));
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void anAnswer_cancelledBetweenItsItemAndItsCompletion_isReleased() {
    ByteBuf data = Unpooled.directBuffer().writeByte(1);
    FutureSubscriber<Payload> call = new FutureSubscriber<>();
    AtomicBoolean cancelledUpstream = new AtomicBoolean();
    call.onSubscribe(subscription(cancelledUpstream));
    call.onNext(Payload.of(data));
    call.cancel(false); // a timeout, or the caller; the completion never comes after the cancel
    assertThat(cancelledUpstream).isTrue();
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void everyWayToCompleteTheFutureFromOutside_cancelsTheCall_andReleasesAnItemThatCame()
      throws Exception {
    java.util.Map<String, java.util.function.Consumer<FutureSubscriber<Payload>>> ways =
        new java.util.LinkedHashMap<>();
    ways.put("cancel", f -> f.cancel(true));
    ways.put("complete", f -> f.complete(null));
    ways.put("completeExceptionally", f -> f.completeExceptionally(new RuntimeException("x")));
    ways.put("orTimeout", f -> f.orTimeout(1, java.util.concurrent.TimeUnit.MILLISECONDS));
    ways.put(
        "completeOnTimeout",
        f -> f.completeOnTimeout(null, 1, java.util.concurrent.TimeUnit.MILLISECONDS));
    ways.put("completeAsync", f -> f.completeAsync(() -> null));
    ways.put("completeAsync on an executor", f -> f.completeAsync(() -> null, Runnable::run));
    ways.put("obtrudeValue", f -> f.obtrudeValue(null));
    ways.put("obtrudeException", f -> f.obtrudeException(new RuntimeException("x")));
    for (var way : ways.entrySet()) {
      ByteBuf data = Unpooled.directBuffer().writeByte(1);
      FutureSubscriber<Payload> call = new FutureSubscriber<>();
      AtomicBoolean cancelledUpstream = new AtomicBoolean();
      call.onSubscribe(subscription(cancelledUpstream));
      call.onNext(Payload.of(data)); // the item came; its completion has not
      way.getValue().accept(call);
      long until = System.nanoTime() + 5_000_000_000L;
      // The timeouts and the async completion run on other threads, which cancel the call and
      // then release the item: wait for both before looking.
      while ((!cancelledUpstream.get() || data.refCnt() != 0) && System.nanoTime() < until) {
        Thread.sleep(1);
      }
      assertThat(cancelledUpstream).as(way.getKey()).isTrue();
      assertThat(data.refCnt()).as(way.getKey()).isZero();
      call.onComplete(); // late: nothing more happens
      assertThat(data.refCnt()).as(way.getKey()).isZero();
    }
  }

  @Test
  void anAnswer_completedNormally_isTheCallersToRelease() {
    ByteBuf data = Unpooled.directBuffer().writeByte(1);
    FutureSubscriber<Payload> call = new FutureSubscriber<>();
    call.onSubscribe(subscription(new AtomicBoolean()));
    call.onNext(Payload.of(data));
    call.onComplete();
    assertThat(call.join().data()).isSameAs(data);
    assertThat(data.refCnt()).isOne();
    call.join().release();
  }

  private static Subscription subscription(AtomicBoolean cancelled) {
    return new Subscription() {
      @Override
      public void request(long n) {}

      @Override
      public void cancel() {
        cancelled.set(true);
      }
    };
  }
}
