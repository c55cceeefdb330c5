package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** A blocking handler's call on an executor: its answer, its cancel, its errors. */
class ResponseSinkTest {
  @Test
  void aBlockingHandlerThatReturnsNull_completesWithoutAResponse_notWithAnNpe() {
    Recorder recorder = new Recorder(s -> s.request(1));
    Blocking.<String>onExecutor(Runnable::run, () -> null).subscribe(recorder);
    // the runtime then fails the call with INTERNAL
    assertThat(recorder.signals).containsExactly("complete");
  }

  @Test
  void aCallCancelledWhileItWaitsForItsThread_doesNotRunItsHandler() {
    Queue<Runnable> executor = new ArrayDeque<>();
    AtomicBoolean ran = new AtomicBoolean();
    Recorder recorder = new Recorder(true);
    Blocking.onExecutor(
            executor::add,
            () -> {
              ran.set(true);
              return "x";
            })
        .subscribe(recorder);
    assertThat(executor).hasSize(1);
    executor.poll().run();
    assertThat(ran).as("the handler ran for a cancelled call").isFalse();
    assertThat(recorder.signals).isEmpty(); // nothing after a cancel
  }

  @Test
  void aCallNotCancelled_runsItsHandlerAndAnswers() {
    Queue<Runnable> executor = new ArrayDeque<>();
    Recorder recorder = new Recorder(false);
    Blocking.onExecutor(executor::add, () -> "x").subscribe(recorder);
    executor.poll().run();
    assertThat(recorder.signals).containsExactly("x", "complete");
  }

  @Test
  void anAnswerReadyBeforeItIsAskedFor_goesOutFromTheThreadThatAsks() {
    Queue<Runnable> executor = new ArrayDeque<>();
    Recorder recorder = new Recorder(s -> {}); // asks later
    Blocking.onExecutor(executor::add, () -> "x").subscribe(recorder);
    executor.poll().run(); // the handler is done; nothing asked for yet
    assertThat(recorder.signals).isEmpty();
    recorder.subscription.request(1);
    assertThat(recorder.signals).containsExactly("x", "complete");
    recorder.subscription.request(1); // asked again: nothing more
    assertThat(recorder.signals).containsExactly("x", "complete");
  }

  @Test
  void aNonPositiveRequest_skipsTheHandlerAndEndsTheCallWithRule39sError() {
    Queue<Runnable> executor = new ArrayDeque<>();
    AtomicBoolean ran = new AtomicBoolean();
    Recorder recorder = new Recorder(s -> s.request(0));
    Blocking.onExecutor(
            executor::add,
            () -> {
              ran.set(true);
              return "x";
            })
        .subscribe(recorder);
    executor.poll().run();
    assertThat(ran).isFalse();
    assertThat(recorder.signals).containsExactly("error request-n must be positive (rule 3.9): 0");
  }

  @Test
  void aHandlerThatThrows_failsTheCall_andAFullExecutorGivesUnavailable() {
    Recorder thrown = new Recorder(false);
    Blocking.<String>onExecutor(
            Runnable::run,
            () -> {
              throw new IllegalStateException("boom");
            })
        .subscribe(thrown);
    assertThat(thrown.signals).containsExactly("error boom");
    Recorder rejected = new Recorder(false);
    Blocking.onExecutor(
            r -> {
              throw new java.util.concurrent.RejectedExecutionException("full");
            },
            () -> "x")
        .subscribe(rejected);
    assertThat(rejected.signals).singleElement().asString().contains("UNAVAILABLE");
  }

  @Test
  void aStreamCancelledWhileItWaits_doesNotRunItsHandler() {
    Queue<Runnable> executor = new ArrayDeque<>();
    AtomicBoolean ran = new AtomicBoolean();
    Blocking.<String>streamOnExecutor(executor::add, sink -> ran.set(true))
        .subscribe(new Recorder(true));
    executor.poll().run();
    assertThat(ran).isFalse();
  }

  /** Does {@code atSubscribe} with its subscription (kept), records what it is told. */
  private static final class Recorder implements Subscriber<String> {
    final java.util.function.Consumer<Subscription> atSubscribe;
    final java.util.List<String> signals = new java.util.ArrayList<>();
    Subscription subscription;

    /** Asks for everything, or cancels at once. */
    Recorder(boolean cancels) {
      this(
          s -> {
            if (cancels) {
              s.cancel();
            } else {
              s.request(Long.MAX_VALUE);
            }
          });
    }

    Recorder(java.util.function.Consumer<Subscription> atSubscribe) {
      this.atSubscribe = atSubscribe;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      atSubscribe.accept(s);
    }

    @Override
    public void onNext(String item) {
      signals.add(item);
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error " + t.getMessage());
    }

    @Override
    public void onComplete() {
      signals.add("complete");
    }
  }
}
