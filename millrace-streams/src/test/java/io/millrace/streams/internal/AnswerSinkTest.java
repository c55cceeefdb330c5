package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultEventLoop;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

/**
 * The request-response answer's sink against a stand-in stream, without sockets: what goes out on
 * the stream for each kind of answer, when the Publisher is asked, and who releases what.
 */
class AnswerSinkTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final AnswerStream fake = new AnswerStream(loop);

  @AfterEach
  void stop() throws InterruptedException {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  /** Subscribes a new sink to {@code answer} on the loop, as the responder does, and returns it. */
  private AnswerSink answer(org.reactivestreams.Publisher<Payload> answer) throws Exception {
    return answer(fake, answer);
  }

  private AnswerSink answer(AnswerStream on, org.reactivestreams.Publisher<Payload> answer)
      throws Exception {
    AnswerSink sink = new AnswerSink(on.stream);
    loop.submit(() -> answer.subscribe(sink)).get(5, TimeUnit.SECONDS);
    return sink;
  }

  private void settle() throws Exception {
    loop.submit(() -> {}).get(5, TimeUnit.SECONDS);
  }

  @Test
  void aMonosAnswerGoesOutWithTheCompletion_andTheMonoEndsByItself() throws Exception {
    List<SignalType> ends = new CopyOnWriteArrayList<>();
    answer(Mono.just(Payload.of(Buffers.direct("ok"))).doFinally(ends::add));
    settle();
    assertThat(fake.events).containsExactly("next ok");
    assertThat(ends).as("a success, not a cancel").containsExactly(SignalType.ON_COMPLETE);
  }

  @Test
  void anEmptyAnswerCompletesTheStream_aFailureFailsIt() throws Exception {
    AnswerStream failed = new AnswerStream(loop);
    answer(Mono.empty());
    answer(failed, Mono.error(new IllegalStateException("no")));
    settle();
    assertThat(fake.events).containsExactly("complete");
    assertThat(failed.events).containsExactly("fail IllegalStateException");
  }

  @Test
  void afterTheAnswerThePublisherIsAskedForOneMore_andItsCompletionEndsItQuietly()
      throws Exception {
    AnswerSink sink = new AnswerSink(fake.stream);
    Requests upstream = new Requests();
    loop.submit(() -> sink.onSubscribe(upstream)).get(5, TimeUnit.SECONDS);
    assertThat(upstream.requested).hasValue(1);
    loop.submit(() -> sink.onNext(Payload.of(Buffers.direct("ok")))).get(5, TimeUnit.SECONDS);
    assertThat(fake.events).containsExactly("next ok");
    assertThat(upstream.requested).as("one past the answer").hasValue(2);
    loop.submit(() -> sink.onComplete()).get(5, TimeUnit.SECONDS);
    assertThat(upstream.cancelled).isFalse();
    assertThat(sink.isStopped()).isFalse();
    assertThat(fake.events).as("nothing more on the stream").containsExactly("next ok");
  }

  /**
   * A stress test, not a regression test for one interleaving: the order in which the drain reads
   * the Publisher's end and its answer makes the race it guards against impossible, but the window
   * it closed was two adjacent reads, which this rarely hits.
   */
  @Test
  void anAnswerAndItsEndFromAnotherThread_raceTheLoopsDrains_theAnswerAlwaysGoesOut()
      throws Exception {
    ExecutorService publisher = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 1_000; i++) {
        AnswerStream on = new AnswerStream(loop);
        AnswerSink sink = new AnswerSink(on.stream);
        Requests upstream = new Requests();
        loop.submit(() -> sink.onSubscribe(upstream)).get(5, TimeUnit.SECONDS);
        ByteBuf b = Buffers.direct("x" + i);
        Future<?> emitted =
            publisher.submit(
                () -> {
                  sink.onNext(Payload.of(b));
                  sink.onComplete();
                });
        for (int k = 0; k < 20; k++) {
          loop.execute(() -> sink.onReady(on.stream)); // drains racing the two signals
        }
        emitted.get(5, TimeUnit.SECONDS);
        settle();
        assertThat(on.events).as("round %d", i).containsExactly("next x" + i);
        assertThat(b.refCnt()).as("round %d", i).isZero();
      }
    } finally {
      publisher.shutdownNow();
    }
  }

  @Test
  void anAnswerThatCannotBeHandedOver_failsTheStream_andCancelsThePublisher() throws Exception {
    ByteBuf gone = Buffers.direct("gone");
    gone.release();
    List<SignalType> ends = new CopyOnWriteArrayList<>();
    AnswerSink sink =
        answer(Flux.just(Payload.lent(null, gone)).concatWith(Flux.never()).doFinally(ends::add));
    settle();
    assertThat(fake.events).containsExactly("fail IllegalReferenceCountException");
    assertThat(ends).containsExactly(SignalType.CANCEL);
    assertThat(sink.isStopped()).isTrue();
  }

  @Test
  void aPublisherOfMoreThanOne_isCancelledAfterTheFirst_theRestReleased() throws Exception {
    List<ByteBuf> made = new CopyOnWriteArrayList<>();
    List<SignalType> ends = new CopyOnWriteArrayList<>();
    answer(
        Flux.range(0, 3)
            .map(
                i -> {
                  ByteBuf b = Buffers.direct(Integer.toString(i));
                  made.add(b);
                  return Payload.of(b);
                })
            .doFinally(ends::add));
    settle();
    assertThat(fake.events).containsExactly("next 0");
    assertThat(ends).containsExactly(SignalType.CANCEL);
    assertThat(made).hasSize(2).allMatch(b -> b.refCnt() == 0);
  }

  @Test
  void anAnswerFromAnotherThread_goesOutOnTheLoop() throws Exception {
    answer(
        Mono.fromCallable(() -> Payload.of(Buffers.direct("late")))
            .subscribeOn(Schedulers.single()));
    for (int i = 0; i < 100 && fake.events.isEmpty(); i++) {
      Thread.sleep(10);
    }
    settle();
    assertThat(fake.events).containsExactly("next late");
    assertThat(fake.threads).allMatch(t -> t.startsWith("defaultEventLoop"));
  }

  @Test
  void nothingIsAskedWhileTheStreamCannotTakeIt_theAnswerFollowsOnReady() throws Exception {
    fake.ready = false;
    AtomicLong asked = new AtomicLong();
    AnswerSink sink =
        answer(Mono.just(Payload.of(Buffers.direct("ok"))).doOnRequest(asked::addAndGet));
    settle();
    assertThat(asked).hasValue(0);
    assertThat(fake.events).isEmpty();
    fake.ready = true;
    loop.submit(() -> sink.onReady(fake.stream)).get(5, TimeUnit.SECONDS);
    assertThat(asked).as("one: the Mono completed with its answer").hasValue(1);
    assertThat(fake.events).containsExactly("next ok");
  }

  @Test
  void anAnswerThatWaits_isSentOnReady_orReleasedWhenThePeerCancels() throws Exception {
    // Emitted from another thread while the stream cannot take it: it waits in the sink.
    fake.ready = false;
    AnswerSink sent = new AnswerSink(fake.stream);
    sent.onSubscribe(new Requests());
    sent.onNext(Payload.of(Buffers.direct("waited")));
    settle();
    assertThat(fake.events).isEmpty();
    fake.ready = true;
    loop.submit(() -> sent.onReady(fake.stream)).get(5, TimeUnit.SECONDS);
    assertThat(fake.events).containsExactly("next waited");

    fake.ready = false;
    AnswerSink dropped = new AnswerSink(fake.stream);
    Requests upstream = new Requests();
    dropped.onSubscribe(upstream);
    ByteBuf b = Buffers.direct("dropped");
    dropped.onNext(Payload.of(b));
    settle();
    loop.submit(() -> dropped.onCancel(fake.stream)).get(5, TimeUnit.SECONDS);
    assertThat(b.refCnt()).isZero();
    assertThat(upstream.cancelled).isTrue();
    assertThat(dropped.isStopped()).isTrue();
    assertThat(fake.events).containsExactly("next waited");
  }

  @Test
  void thePeersCancelBeforeTheAnswer_cancelsThePublisher_andALateAnswerIsReleased()
      throws Exception {
    AnswerSink sink = new AnswerSink(fake.stream);
    Requests upstream = new Requests();
    loop.submit(() -> sink.onSubscribe(upstream)).get(5, TimeUnit.SECONDS);
    assertThat(upstream.requested).hasValue(1);
    loop.submit(() -> sink.onCancel(fake.stream)).get(5, TimeUnit.SECONDS);
    assertThat(upstream.cancelled).isTrue();
    ByteBuf late = Buffers.direct("late");
    sink.onNext(Payload.of(late)); // from another thread, after the cancel
    settle();
    assertThat(late.refCnt()).isZero();
    assertThat(fake.events).isEmpty();
  }

  @Test
  void aSecondSubscriptionIsCancelled() throws Exception {
    AnswerSink sink = new AnswerSink(fake.stream);
    Requests first = new Requests();
    Requests second = new Requests();
    sink.onSubscribe(first);
    sink.onSubscribe(second);
    assertThat(second.cancelled).isTrue();
    assertThat(first.cancelled).isFalse();
  }
}
