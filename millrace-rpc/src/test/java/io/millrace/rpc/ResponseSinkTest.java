package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** A blocking handler's call on an executor, cancelled before the executor runs it. */
class ResponseSinkTest {
  @Test
  void aBlockingHandlerThatReturnsNull_completesWithoutAResponse_notWithAnNpe() {
    java.util.List<String> signals = new java.util.ArrayList<>();
    Blocking.<String>onExecutor(Runnable::run, () -> null)
        .subscribe(
            new Subscriber<>() {
              @Override
              public void onSubscribe(Subscription s) {
                s.request(1);
              }

              @Override
              public void onNext(String value) {
                signals.add("next " + value);
              }

              @Override
              public void onError(Throwable t) {
                signals.add("error " + t);
              }

              @Override
              public void onComplete() {
                signals.add("complete"); // the runtime then fails the call with INTERNAL
              }
            });
    assertThat(signals).containsExactly("complete");
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
    java.util.List<String> signals = new java.util.ArrayList<>();
    Subscription[] subscription = new Subscription[1];
    Blocking.onExecutor(executor::add, () -> "x")
        .subscribe(
            new Subscriber<String>() {
              @Override
              public void onSubscribe(Subscription s) {
                subscription[0] = s; // asks later
              }

              @Override
              public void onNext(String value) {
                signals.add(value);
              }

              @Override
              public void onError(Throwable t) {
                signals.add("error " + t);
              }

              @Override
              public void onComplete() {
                signals.add("complete");
              }
            });
    executor.poll().run(); // the handler is done; nothing asked for yet
    assertThat(signals).isEmpty();
    subscription[0].request(1);
    assertThat(signals).containsExactly("x", "complete");
    subscription[0].request(1); // asked again: nothing more
    assertThat(signals).containsExactly("x", "complete");
  }

  @Test
  void aNonPositiveRequest_skipsTheHandlerAndEndsTheCallWithRule39sError() {
    Queue<Runnable> executor = new ArrayDeque<>();
    AtomicBoolean ran = new AtomicBoolean();
    java.util.List<String> signals = new java.util.ArrayList<>();
    Blocking.onExecutor(
            executor::add,
            () -> {
              ran.set(true);
              return "x";
            })
        .subscribe(
            new Subscriber<String>() {
              @Override
              public void onSubscribe(Subscription s) {
                s.request(0);
              }

              @Override
              public void onNext(String value) {
                signals.add(value);
              }

              @Override
              public void onError(Throwable t) {
                signals.add("error " + t.getMessage());
              }

              @Override
              public void onComplete() {
                signals.add("complete");
              }
            });
    executor.poll().run();
    assertThat(ran).isFalse();
    assertThat(signals).containsExactly("error request-n must be positive (rule 3.9): 0");
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
    assertThat(thrown.signals).containsExactly("error java.lang.IllegalStateException: boom");
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

  /** Asks for everything, or cancels at once; records what it is told. */
  private static final class Recorder implements Subscriber<String> {
    final boolean cancels;
    final Queue<String> signals = new ArrayDeque<>();

    Recorder(boolean cancels) {
      this.cancels = cancels;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (cancels) {
        s.cancel();
      } else {
        s.request(Long.MAX_VALUE);
      }
    }

    @Override
    public void onNext(String item) {
      signals.add(item);
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
}
