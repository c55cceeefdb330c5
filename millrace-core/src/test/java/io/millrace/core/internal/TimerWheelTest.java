package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The per-loop timer wheel on a real loop and real time. Assertions wait for conditions (bounded),
 * and accept lateness, never earliness.
 */
class TimerWheelTest {
  private final TestLoop loop = new TestLoop();

  @AfterEach
  void closeLoop() {
    loop.close();
  }

  private final class Recorder extends Timeout {
    final String name;
    final List<String> fired;
    final CompletableFuture<Long> firedAt = new CompletableFuture<>();

    Recorder(String name, List<String> fired) {
      this.name = name;
      this.fired = fired;
    }

    @Override
    void expire(long nowNanos) {
      fired.add(name);
      firedAt.complete(System.nanoTime());
    }
  }

  @Test
  void timeouts_runAfterTheirDeadline_inDeadlineOrder_oneWheelPerLoop() throws Exception {
    List<String> fired = new CopyOnWriteArrayList<>();
    Recorder late = new Recorder("late", fired);
    Recorder early = new Recorder("early", fired);
    long start = System.nanoTime();
    loop.run(
        () -> {
          TimerWheel wheel = TimerWheel.forLoop(loop.executor);
          assertThat(TimerWheel.forLoop(loop.executor)).isSameAs(wheel);
          wheel.schedule(late, start + TimeUnit.MILLISECONDS.toNanos(300));
          wheel.schedule(early, start + TimeUnit.MILLISECONDS.toNanos(100));
        });
    long lateAt = late.firedAt.get(5, TimeUnit.SECONDS);
    long earlyAt = early.firedAt.get(5, TimeUnit.SECONDS);
    assertThat(fired).containsExactly("early", "late");
    assertThat(earlyAt - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
    assertThat(lateAt - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
  }

  @Test
  void cancelledAndMovedTimeouts_runOnlyAtTheirNewDeadline() throws Exception {
    List<String> fired = new CopyOnWriteArrayList<>();
    Recorder cancelled = new Recorder("cancelled", fired);
    Recorder moved = new Recorder("moved", fired);
    Recorder marker = new Recorder("marker", fired);
    loop.run(
        () -> {
          long start = System.nanoTime(); // (here: the loop may start the task late)
          TimerWheel wheel = TimerWheel.forLoop(loop.executor);
          wheel.schedule(cancelled, start + TimeUnit.MILLISECONDS.toNanos(100));
          wheel.schedule(moved, start + TimeUnit.MILLISECONDS.toNanos(100));
          wheel.schedule(marker, start + TimeUnit.MILLISECONDS.toNanos(250));
          wheel.cancel(cancelled);
          wheel.schedule(moved, start + TimeUnit.MILLISECONDS.toNanos(400));
        });
    moved.firedAt.get(5, TimeUnit.SECONDS);
    assertThat(fired).containsExactly("marker", "moved");
    assertThat(cancelled.isScheduled()).isFalse();
  }

  @Test
  void deadlineBeyondOneRotation_waitsForItsRound() throws Exception {
    List<String> fired = new CopyOnWriteArrayList<>();
    Recorder far = new Recorder("far", fired);
    Recorder near = new Recorder("near", fired);
    long rotation = TimerWheel.SLOTS * TimerWheel.TICK_NANOS;
    long start = System.nanoTime();
    loop.run(
        () -> {
          TimerWheel wheel = TimerWheel.forLoop(loop.executor);
          // Same slot as 'near', one rotation later: passed over on the first visit.
          wheel.schedule(far, start + TimeUnit.MILLISECONDS.toNanos(100) + rotation);
          wheel.schedule(near, start + TimeUnit.MILLISECONDS.toNanos(100));
        });
    near.firedAt.get(5, TimeUnit.SECONDS);
    Thread.sleep(200); // a few more ticks: 'far' must still wait
    assertThat(fired).containsExactly("near");
    assertThat(loop.call(far::isScheduled)).isTrue();
    loop.run(() -> TimerWheel.forLoop(loop.executor).cancel(far));
  }

  @Test
  void expiringTimeout_canRescheduleItselfAndCancelOthersInTheSameSlot() throws Exception {
    List<String> fired = new CopyOnWriteArrayList<>();
    Recorder victim = new Recorder("victim", fired);
    CompletableFuture<Integer> rounds = new CompletableFuture<>();
    long start = System.nanoTime();
    Timeout repeating =
        new Timeout() {
          int runs;

          @Override
          void expire(long nowNanos) {
            TimerWheel wheel = TimerWheel.forLoop(loop.executor);
            wheel.cancel(victim); // in the same slot, maybe next in the walk
            if (++runs < 3) {
              wheel.schedule(this, nowNanos + TimeUnit.MILLISECONDS.toNanos(60));
            } else {
              rounds.complete(runs);
            }
          }
        };
    loop.run(
        () -> {
          TimerWheel wheel = TimerWheel.forLoop(loop.executor);
          // Scheduled last, 'repeating' heads the slot's list: 'victim' is the next node of the
          // walk when 'repeating' cancels it.
          wheel.schedule(victim, start + TimeUnit.MILLISECONDS.toNanos(100));
          wheel.schedule(repeating, start + TimeUnit.MILLISECONDS.toNanos(100));
        });
    assertThat(rounds.get(5, TimeUnit.SECONDS)).isEqualTo(3);
    assertThat(fired).isEmpty();
  }
}
