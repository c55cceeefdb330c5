package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** A blocking handler's call on an executor: its answer, its cancel, its errors. */
class BlockingOnExecutorTest {
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
    Blocking.onExecutor(executor::add, marking(ran)).subscribe(recorder);
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
    Blocking.onExecutor(executor::add, marking(ran)).subscribe(recorder);
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
  void aHandlerThatThrowsAnError_failsTheCall_andTheErrorReachesTheExecutor() {
    Recorder recorder = new Recorder(false);
    Queue<Runnable> executor = new ArrayDeque<>();
    Blocking.<String>onExecutor(
            executor::add,
            () -> {
              throw new AssertionError("fatal");
            })
        .subscribe(recorder);
    Runnable task = executor.poll();
    assertThatThrownBy(task::run).isInstanceOf(AssertionError.class);
    assertThat(recorder.signals).containsExactly("error fatal");
  }

  @Test
  void aCancelAfterTheHandlerIsDone_endsIt_laterRequestsSendNothing() {
    Queue<Runnable> executor = new ArrayDeque<>();
    Recorder recorder = new Recorder(s -> {});
    Blocking.onExecutor(executor::add, () -> "x").subscribe(recorder);
    executor.poll().run();
    recorder.subscription.cancel();
    recorder.subscription.request(1);
    recorder.subscription.request(0); // after a cancel: nothing (rule 3.6)
    assertThat(recorder.signals).isEmpty();
  }

  @Test
  void aRejectionAfterAnEarlyCancel_sendsNothing() {
    Recorder recorder = new Recorder(true);
    Blocking.onExecutor(
            r -> {
              throw new java.util.concurrent.RejectedExecutionException("full");
            },
            () -> "x")
        .subscribe(recorder);
    assertThat(recorder.signals).isEmpty();
  }

  /**
   * The handler's end on its thread races a request, a non-positive request and a cancel from
   * another: every round ends with exactly one terminal signal unless the cancel came first, never
   * more, and an answer is always followed by its completion.
   */
  @Test
  void racingTheHandlersEnd_requestsAndCancel_endEachCallAtMostOnce() throws Exception {
    ExecutorService handlers = Executors.newSingleThreadExecutor();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      for (int round = 0; round < 2_000; round++) {
        int kind = round % 3; // 0: request(1), 1: request(0), 2: request(1) then cancel
        CyclicBarrier start = new CyclicBarrier(2);
        Recorder synced = new Recorder(s -> {});
        Blocking.onExecutor(
                r ->
                    handlers.execute(
                        () -> {
                          await(start);
                          r.run();
                        }),
                () -> "x")
            .subscribe(synced);
        Future<?> asker =
            other.submit(
                () -> {
                  await(start);
                  if (kind == 1) {
                    synced.subscription.request(0);
                  } else {
                    synced.subscription.request(1);
                    if (kind == 2) {
                      synced.subscription.cancel();
                    }
                  }
                });
        asker.get(10, TimeUnit.SECONDS);
        handlers.submit(() -> {}).get(10, TimeUnit.SECONDS); // the handler's task is done
        java.util.List<String> seen;
        synchronized (synced.signals) {
          seen = java.util.List.copyOf(synced.signals);
        }
        if (kind == 0) {
          assertThat(seen).as("round " + round).containsExactly("x", "complete");
        } else if (kind == 1) {
          assertThat(seen)
              .as("round " + round)
              .containsExactly("error request-n must be positive (rule 3.9): 0");
        } else {
          assertThat(seen)
              .as("round " + round)
              .isIn(java.util.List.of(), java.util.List.of("x", "complete"));
        }
      }
    } finally {
      handlers.shutdownNow();
      other.shutdownNow();
    }
  }

  /** A handler that answers "x" and notes that it ran. */
  private static java.util.function.Supplier<String> marking(AtomicBoolean ran) {
    return () -> {
      ran.set(true);
      return "x";
    };
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
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
    final java.util.List<String> signals =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    volatile Subscription subscription;

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
