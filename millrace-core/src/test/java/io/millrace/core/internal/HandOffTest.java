package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.ConnectionConfig;
import io.millrace.frame.FrameType;
import io.millrace.testing.LoopBlockingExtension;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Calls from other threads: one bounded queue per connection, one drain, a readiness signal. */
class HandOffTest {
  private final TestLoop loop = new TestLoop();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void closeLoop() {
    release.countDown();
    loop.close();
  }

  /** Occupies the loop until {@link #release} counts down, so calls pile up in the queue. */
  private void blockLoop() throws InterruptedException {
    blockLoop(loop, release);
  }

  /** Occupies {@code loop} until {@code release} counts down, so calls pile up in its queue. */
  static void blockLoop(TestLoop loop, CountDownLatch release) throws InterruptedException {
    CountDownLatch blocked = new CountDownLatch(1);
    loop.executor.execute(
        () -> {
          blocked.countDown();
          try {
            LoopBlockingExtension.onPurpose(() -> release.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(blocked.await(5, TimeUnit.SECONDS)).isTrue();
  }

  private ByteBuf text(String s) {
    return loop.alloc.buffer().writeBytes(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private ByteBuf bytes(int n) {
    return loop.alloc.buffer(n).writeZero(n);
  }

  private ScriptedTransport client(ConnectionConfig config) {
    ScriptedTransport t = ScriptedTransport.client(loop, config, null);
    t.take();
    return t;
  }

  @Test
  void burstFromAnotherThread_oneLoopTaskAndOneFlushCarryIt_inOrder() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    int flushesBefore = loop.call(() -> t.flushes);
    blockLoop();
    for (int i = 0; i < 100; i++) {
      t.engine.fireAndForget(null, loop.alloc.buffer().writeInt(i));
    }
    assertThat(loop.executor.pendingTasks()).as("one drain task for 100 calls").isEqualTo(1);
    release.countDown();
    List<WireFrame> frames = t.take();
    assertThat(frames).hasSize(100).allMatch(f -> f.type == FrameType.REQUEST_FNF);
    List<Integer> ids = new ArrayList<>();
    frames.forEach(f -> ids.add(f.streamId));
    assertThat(ids).isSorted();
    assertThat(loop.call(() -> t.flushes) - flushesBefore).isEqualTo(1);
  }

  @Test
  void smallCallsFromAnotherThread_oneFlushAtTheDrainsEnd_notOneEvery256Writes() throws Exception {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null, true);
    t.take();
    int flushesBefore = loop.call(() -> t.flushes);
    blockLoop();
    int calls = 2_000; // 13-byte frames: 26 KB, under one flush's worth of bytes
    for (int i = 0; i < calls; i++) {
      t.engine.fireAndForget(null, loop.alloc.buffer().writeInt(i));
    }
    release.countDown();
    assertThat(t.take()).hasSize(calls);
    assertThat(loop.call(() -> t.flushes) - flushesBefore).isEqualTo(1);
  }

  @Test
  void callsFromAnotherThread_beyondABatch_eachFullBatchFlushedBeforeTheDrainEnds()
      throws Exception {
    ScriptedTransport t = ScriptedTransport.client(loop, ConnectionConfig.DEFAULT, null, true);
    t.take();
    int flushesBefore = loop.call(() -> t.flushes);
    blockLoop();
    int calls = 3_000; // 1 KiB each: 3 MiB, many batches, in one drain run of the loop
    for (int i = 0; i < calls; i++) {
      t.engine.fireAndForget(null, bytes(1000));
    }
    release.countDown();
    assertThat(t.take()).hasSize(calls);
    assertThat(loop.call(() -> t.unflushed)).as("all flushed by the drain's end").isZero();
    int flushes = loop.call(() -> t.flushes) - flushesBefore;
    long bytes = calls * 1013L;
    assertThat(flushes)
        .isGreaterThanOrEqualTo((int) (bytes / FrameWriter.BATCH_CAPACITY))
        .isLessThanOrEqualTo((int) (bytes / Flusher.FLUSH_EVERY_BYTES) + 2);
  }

  /** Sends one fire-and-forget from this (test) thread and waits until it is on the wire. */
  private void oneCallFromThisThread(ScriptedTransport t, int value) {
    t.engine.fireAndForget(null, text("c" + value));
    assertThat(t.take()).hasSize(1);
  }

  @Test
  void
      smallDrainsInQuickSuccession_loopYieldsOnceHoldingTheDrain_callsAddedMeanwhileTakenInTheSameRun()
          throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    List<Integer> loopTasksAroundProducer = new ArrayList<>();
    List<Boolean> drainPendingWhileYielding = new ArrayList<>();
    CountDownLatch yieldDone = new CountDownLatch(1);
    int[] yields = {0};
    t.engine.calls.yieldToProducers =
        () -> {
          // What a producer on the loop's CPU does while the loop yields: it adds calls.
          yields[0]++;
          if (yields[0] == 1) {
            loopTasksAroundProducer.add(loop.executor.pendingTasks());
            Thread producer =
                new Thread(
                    () -> {
                      for (int i = 0; i < 50; i++) {
                        t.engine.fireAndForget(null, text("c" + (100 + i)));
                      }
                    });
            producer.start();
            try {
              LoopBlockingExtension.onPurpose(() -> producer.join(5_000));
            } catch (InterruptedException e) {
              throw new AssertionError(e);
            }
            loopTasksAroundProducer.add(loop.executor.pendingTasks());
            drainPendingWhileYielding.add(t.engine.calls.drainPending());
            yieldDone.countDown();
          }
        };
    int flushesBefore = loop.call(() -> t.flushes);
    oneCallFromThisThread(t, 0); // a small drain: remembered, no yield
    assertThat(yields[0]).isZero();
    t.engine.fireAndForget(null, text("c1")); // another, at the same instant
    assertThat(yieldDone.await(5, TimeUnit.SECONDS)).isTrue(); // (this thread queues nothing)
    List<WireFrame> frames = t.take();
    assertThat(yields[0]).as("one yield for the second small drain").isEqualTo(1);
    assertThat(drainPendingWhileYielding)
        .as("the yielding drain holds the flag")
        .containsExactly(true);
    assertThat(loopTasksAroundProducer)
        .as("the producer's 50 calls scheduled no drain: they woke nobody")
        .hasSize(2)
        .allMatch(n -> n <= 1) // (the connection's own flush task may wait)
        .containsOnly(loopTasksAroundProducer.get(0));
    List<String> expected = new ArrayList<>(List.of("c1"));
    for (int i = 0; i < 50; i++) {
      expected.add("c" + (100 + i));
    }
    assertThat(frames).extracting(f -> f.data).containsExactlyElementsOf(expected);
    assertThat(loop.call(() -> t.flushes) - flushesBefore)
        .as("the first call, the drained call before the yield, the 50 after it")
        .isEqualTo(3);
  }

  @Test
  void smallDrainWithAnotherTaskWaitingOnTheLoop_noYield() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    int[] yields = {0};
    t.engine.calls.yieldToProducers = () -> yields[0]++;
    oneCallFromThisThread(t, 0);
    blockLoop();
    t.engine.fireAndForget(null, text("c1")); // its drain runs with the task below waiting
    loop.executor.execute(() -> {});
    release.countDown();
    assertThat(t.take()).hasSize(1);
    assertThat(yields[0]).isZero();
  }

  @Test
  void yieldRefused_callsStillSent_noYieldAgain() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    int[] yields = {0};
    t.engine.calls.yieldToProducers =
        () -> {
          yields[0]++;
          throw new Error("refused, as a blocking-call detector without the integration does");
        };
    oneCallFromThisThread(t, 0);
    for (int i = 1; i < 4; i++) {
      // Waits for the flush without queueing anything on the loop, so each drain may yield.
      CountDownLatch flushed = new CountDownLatch(1);
      t.onFlush = flushed::countDown;
      t.engine.fireAndForget(null, text("c" + i));
      assertThat(flushed.await(5, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(t.take()).hasSize(3);
    assertThat(yields[0]).as("refused once, not tried again").isEqualTo(1);
    assertThat(t.engine.calls.drainPending()).isFalse();
  }

  @Test
  void yieldOnTheLoop_allowedByTheBlockHoundIntegration() {
    assertThat(LoopBlockingExtension.installed()).isTrue();
    loop.run(CallQueue::yieldCpu); // BlockHound, installed by the tests, would throw here
  }

  @Test
  void smallDrainsFarApart_noYield() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    int[] yields = {0};
    t.engine.calls.yieldToProducers = () -> yields[0]++;
    for (int i = 0; i < 5; i++) {
      oneCallFromThisThread(t, i);
      t.advance(Duration.ofNanos(CallQueue.TAKING_TURNS_NANOS));
    }
    assertThat(yields[0]).isZero();
  }

  @Test
  void largeDrainsInQuickSuccession_noYield() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    int[] yields = {0};
    t.engine.calls.yieldToProducers = () -> yields[0]++;
    for (int round = 0; round < 3; round++) {
      CountDownLatch released = new CountDownLatch(1);
      blockLoop(loop, released);
      for (int i = 0; i < CallQueue.FEW_CALLS; i++) {
        t.engine.fireAndForget(null, loop.alloc.buffer().writeInt(i));
      }
      released.countDown();
      assertThat(t.take()).hasSize(CallQueue.FEW_CALLS);
    }
    assertThat(yields[0]).isZero();
  }

  @Test
  void queueOverItsBound_callRefusedAndItsBuffersReleased_readinessComesBack() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedCallBytes(4096).build());
    blockLoop();
    List<ByteBuf> accepted = new ArrayList<>();
    ByteBuf refused = null;
    for (int i = 0; i < 10; i++) {
      ByteBuf data = bytes(1000);
      try {
        t.engine.fireAndForget(null, data);
        accepted.add(data);
      } catch (RejectedExecutionException e) {
        refused = data;
        break;
      }
    }
    assertThat(accepted).hasSize(3); // 3 x (1000 + 64) fit in 4096, a fourth does not
    assertThat(refused).isNotNull();
    assertThat(refused.refCnt()).as("a refused call's buffer is released").isZero();
    assertThat(t.engine.isReadyForCalls()).isFalse();
    CompletableFuture<Boolean> calledBackOnLoop = new CompletableFuture<>();
    t.engine.whenReadyForCalls(() -> calledBackOnLoop.complete(loop.executor.inEventLoop()));
    assertThat(calledBackOnLoop).isNotDone();
    release.countDown();
    assertThat(calledBackOnLoop.get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(t.engine.isReadyForCalls()).isTrue();
    assertThat(t.take()).hasSize(3);
  }

  @Test
  void awaitReadyForCalls_parksUntilTheLoopDrains() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedCallBytes(4096).build());
    blockLoop();
    t.engine.fireAndForget(null, bytes(2500)); // over half the bound: not ready
    CompletableFuture<Boolean> waited = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                waited.complete(t.engine.awaitReadyForCalls(Duration.ofSeconds(10)));
              } catch (InterruptedException e) {
                waited.completeExceptionally(e);
              }
            });
    waiter.start();
    Thread.sleep(100); // give it the chance to return early if it were wrong
    assertThat(waited).isNotDone();
    release.countDown();
    assertThat(waited.get(5, TimeUnit.SECONDS)).isTrue();
    waiter.join(5000);
  }

  @Test
  void awaitReadyForCalls_onTheLoop_refused() {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    loop.run(
        () ->
            assertThatThrownBy(() -> t.engine.awaitReadyForCalls(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class));
  }

  @Test
  void transportNotWritable_notReady_calledBackWhenItDrains() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    t.setWritable(false);
    assertThat(t.engine.isReadyForCalls()).isFalse();
    CompletableFuture<Void> ready = new CompletableFuture<>();
    t.engine.whenReadyForCalls(() -> ready.complete(null));
    loop.drain();
    assertThat(ready).isNotDone();
    t.setWritable(true);
    ready.get(5, TimeUnit.SECONDS);
  }

  @Test
  void requestOnClosedConnection_listenerFailsOnTheLoop_buffersReleased() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    loop.run(() -> t.engine.dispose());
    loop.drain();
    ByteBuf data = bytes(10);
    RecordingListener listener = new RecordingListener();
    t.engine.requestResponse(null, data, listener);
    loop.drain();
    assertThat(listener.events).containsExactly("error 0x203: connection disposed");
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void callsOnALoopThatShutDown_failOnTheCallingThread_buffersReleased() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    loop.executor.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    ByteBuf data = bytes(10);
    AtomicReference<Thread> failedOn = new AtomicReference<>();
    RecordingListener listener =
        new RecordingListener() {
          @Override
          public void onError(io.millrace.core.Stream stream, int errorCode, String message) {
            failedOn.set(Thread.currentThread());
            super.onError(stream, errorCode, message);
          }
        };
    t.engine.requestStream(null, data, 5, listener);
    assertThat(listener.events)
        .containsExactly("error 0x203: the connection's event loop has shut down");
    assertThat(failedOn.get()).isSameAs(Thread.currentThread());
    assertThat(data.refCnt()).isZero();
    ByteBuf fnf = bytes(10);
    t.engine.fireAndForget(null, fnf);
    assertThat(fnf.refCnt()).isZero();
  }

  @Test
  void closeFromAnotherThread_goesThroughEvenWhenTheQueueIsFull() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedCallBytes(2048).build());
    blockLoop();
    t.engine.fireAndForget(null, bytes(1900));
    assertThatThrownBy(() -> t.engine.fireAndForget(null, bytes(1900)))
        .isInstanceOf(RejectedExecutionException.class);
    t.engine.dispose();
    release.countDown();
    loop.drain();
    assertThat(t.closed).isTrue();
  }

  @Test
  void callLargerThanTheBound_takenWhenTheQueueIsEmpty() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedCallBytes(2048).build());
    assertThat(t.engine.fireAndForget(null, bytes(5000))).isTrue();
    assertThat(t.take()).extracting(f -> f.type).containsExactly(FrameType.REQUEST_FNF);
  }

  @Test
  void peerNotReading_dataCallsRefused_closeStillTaken() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedBytes(4096).build());
    t.setWritable(false);
    loop.run(() -> t.queuedBytes = 10_000);
    ByteBuf data = bytes(10);
    assertThatThrownBy(() -> t.engine.fireAndForget(null, data))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("not reading");
    assertThat(data.refCnt()).isZero();
    t.engine.dispose();
    loop.drain();
    assertThat(t.closed).isTrue();
  }

  @Test
  void longBurst_drainedInTurns_otherTasksRunBetween() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.builder().maxQueuedCallBytes(4L << 20).build());
    blockLoop();
    for (int i = 0; i < 10_000; i++) {
      t.engine.fireAndForget(null, loop.alloc.buffer(1).writeByte(i));
    }
    assertThat(t.engine.queuedCallBytes())
        .as("each queued call is charged its payload and the bookkeeping")
        .isEqualTo(10_000 * (1 + CallQueue.CALL_OVERHEAD));
    CompletableFuture<Integer> writtenWhenOtherTaskRan = new CompletableFuture<>();
    loop.executor.execute(() -> writtenWhenOtherTaskRan.complete(t.written.size()));
    release.countDown();
    assertThat(writtenWhenOtherTaskRan.get(5, TimeUnit.SECONDS))
        .as("a task queued behind the burst runs after one drain turn, not after all of it")
        .isEqualTo(CallQueue.CALLS_PER_DRAIN);
    assertThat(t.take()).hasSize(10_000);
    assertThat(t.engine.queuedCallBytes())
        .as("every call's charge given back, in whatever batches the drain used")
        .isZero();
  }

  @Test
  void requestCancelledBeforeTheLoopSentIt_neverSent() throws Exception {
    ScriptedTransport t = client(ConnectionConfig.DEFAULT);
    blockLoop();
    for (int i = 0; i < CallQueue.CALLS_PER_DRAIN; i++) {
      t.engine.fireAndForget(null, loop.alloc.buffer(1).writeByte(i));
    }
    RecordingListener listener = new RecordingListener();
    ByteBuf data = bytes(3);
    io.millrace.core.Stream stream = t.engine.requestStream(null, data, 5, listener);
    // Runs after the first drain turn and before the turn that would send the request.
    loop.executor.execute(
        () -> {
          assertThat(stream.streamId()).isZero();
          assertThatThrownBy(() -> stream.request(1)).isInstanceOf(IllegalStateException.class);
          stream.cancel();
        });
    release.countDown();
    List<WireFrame> frames = t.take();
    assertThat(frames).noneMatch(f -> f.type == FrameType.REQUEST_STREAM || f.streamId == 0);
    assertThat(listener.events).isEmpty();
    assertThat(data.refCnt()).isZero();
    assertThat(loop.call(() -> t.engine.activeStreams())).isZero();
  }

  @Test
  void isReadyOffTheLoop_refused() throws Exception {
    try (LoopbackPair pair =
        new LoopbackPair(
            ConnectionConfig.DEFAULT,
            ConnectionConfig.DEFAULT,
            io.millrace.core.Responder.REJECT_ALL)) {
      AtomicReference<io.millrace.core.Stream> stream = new AtomicReference<>();
      pair.loop.run(
          () ->
              stream.set(
                  pair.client.engine.requestChannel(null, Frames.utf8("x"), 1, false, null)));
      assertThatThrownBy(() -> stream.get().isReady()).isInstanceOf(IllegalStateException.class);
    }
  }
}
