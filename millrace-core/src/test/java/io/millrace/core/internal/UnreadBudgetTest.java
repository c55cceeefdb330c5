package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The connection's budget for bytes waiting for readers, without a connection. */
class UnreadBudgetTest {
  private final ManualTimers clock = new ManualTimers();

  /** An account whose reader's progress the test sets: what waits is what the test says. */
  private static final class Queue extends UnreadBudget.Account {
    long waiting;

    /** Queues a message of {@code size} bytes if the budget takes it. */
    boolean offer(UnreadBudget budget, long size) {
      boolean ok = budget.admit(this, waiting, size);
      if (ok) {
        waiting += size;
      }
      return ok;
    }

    @Override
    protected long waitingNow() {
      return waiting;
    }
  }

  @Test
  void theDefaultIs64MiB_andAConnectionHasOne() {
    assertThat(ConnectionConfig.DEFAULT.maxUnreadBytes()).isEqualTo(64L << 20);
    assertThat(UnreadBudget.of(null)).isNull();
  }

  @Test
  void exactCharges_fitUpToTheLimit_andWhatIsReleasedFitsAgain() {
    UnreadBudget budget = new UnreadBudget(1000, clock);
    assertThat(budget.tryCharge(600)).isTrue();
    assertThat(budget.tryCharge(400)).isTrue();
    assertThat(budget.tryCharge(1)).as("one past the limit").isFalse();
    assertThat(budget.charged()).isEqualTo(1000);
    budget.release(400);
    assertThat(budget.tryCharge(300)).isTrue();
    assertThat(budget.charged()).isEqualTo(900);
  }

  @Test
  void anAccountsCharge_isWhatWaitsWhenItsNextMessageComes() {
    UnreadBudget budget = new UnreadBudget(1000, clock);
    Queue q = new Queue();
    assertThat(q.offer(budget, 700)).isTrue();
    q.waiting = 0; // the reader took it
    assertThat(budget.charged()).as("not seen yet").isEqualTo(700);
    assertThat(q.offer(budget, 800)).as("700 no longer wait").isTrue();
    assertThat(budget.charged()).isEqualTo(800);
  }

  @Test
  void whatReadersTookOnOtherStreams_isReadAgainBeforeAChargeIsRefused() {
    UnreadBudget budget = new UnreadBudget(1000, clock);
    Queue taken = new Queue();
    Queue other = new Queue();
    assertThat(taken.offer(budget, 900)).isTrue();
    taken.waiting = 0; // read, and no message since
    assertThat(other.offer(budget, 500)).as("the 900 were taken").isTrue();
    assertThat(budget.charged()).isEqualTo(500);
    assertThat(new Queue().offer(budget, 501)).as("500 really wait").isFalse();
  }

  @Test
  void aRefusalReadsTheAccountsAgainAtMostOncePerMillisecond() {
    UnreadBudget budget = new UnreadBudget(1000, clock);
    Queue a = new Queue();
    assertThat(a.offer(budget, 900)).isTrue();
    assertThat(new Queue().offer(budget, 200)).as("the walk finds 900 waiting").isFalse();
    a.waiting = 0;
    assertThat(new Queue().offer(budget, 200))
        .as("within the interval the count is taken as it is")
        .isFalse();
    assertThat(budget.tryCharge(200)).isFalse();
    clock.advance(Duration.ofNanos(UnreadBudget.RECONCILE_INTERVAL_MICROS * 1_000));
    assertThat(budget.tryCharge(200)).as("a millisecond on, the accounts are read").isTrue();
    assertThat(budget.charged()).isEqualTo(200);
  }

  @Test
  void anAccountRefused_isStillChargedWhatWaitsInIt_untilItsReaderTakesIt() {
    UnreadBudget budget = new UnreadBudget(1000, clock);
    Queue a = new Queue();
    assertThat(a.offer(budget, 600)).isTrue();
    Queue b = new Queue();
    b.waiting = 300; // (queued within its first request, say, before the budget saw it)
    assertThat(b.offer(budget, 200)).isFalse();
    assertThat(budget.charged()).as("a's 600 and b's 300").isEqualTo(900);
    a.waiting = 0;
    clock.advance(Duration.ofMillis(1));
    assertThat(new Queue().offer(budget, 800)).as("b's 300 still wait").isFalse();
    b.waiting = 0;
    clock.advance(Duration.ofMillis(1));
    assertThat(new Queue().offer(budget, 1000)).as("b's reader took them").isTrue();
  }

  @Test
  void endedStreamsAccounts_doNotPileUp_overAConnectionsLife() {
    UnreadBudget budget = new UnreadBudget(1L << 40, clock);
    List<Queue> live = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      Queue q = new Queue();
      assertThat(q.offer(budget, 100)).isTrue();
      if (i % 100 == 0) {
        live.add(q); // one in a hundred keeps its message waiting
      } else {
        q.waiting = 0; // read to the end, or its queue dropped: the stream is over
      }
    }
    assertThat(budget.listed())
        .as("listed: the live ones and those since the last walk, not every stream")
        .isLessThanOrEqualTo(2 * Math.max(UnreadBudget.FIRST_SWEEP, live.size()));
    assertThat(budget.listed()).isGreaterThanOrEqualTo(live.size());
    assertThat(budget.charged())
        .as("ended streams' charges dropped at the walks")
        .isLessThanOrEqualTo(100L * budget.listed());
  }
}
