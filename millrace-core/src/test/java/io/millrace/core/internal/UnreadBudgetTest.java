package io.millrace.core.internal;

import static io.millrace.core.internal.UnreadBudget.MESSAGE_OVERHEAD;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The connection's budget for bytes waiting for readers, without a connection. Sizes are chosen so
 * that, with each message's overhead, the arithmetic stays readable: a message of {@code n - O}
 * bytes counts {@code n}.
 */
class UnreadBudgetTest {
  private static final int O = MESSAGE_OVERHEAD;
  private final ManualTimers clock = new ManualTimers();

  /** A budget on a loop the test runs on. */
  private UnreadBudget budget(long limit) {
    return new UnreadBudget(limit, ImmediateEventExecutor.INSTANCE, clock);
  }

  /** An account whose reader's progress the test sets: what waits is what the test says. */
  private static final class Queue extends UnreadBudget.Account {
    long waiting; // counted as a Backlog counts: each message with its overhead

    /** Queues a message that counts {@code counted} bytes (its overhead included) if it fits. */
    boolean offer(UnreadBudget budget, long counted) {
      boolean ok = budget.admit(this, waiting, counted - O);
      if (ok) {
        waiting += counted;
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
  void exactCharges_fitUpToTheLimit_eachWithItsOverhead_andWhatIsReleasedFitsAgain() {
    UnreadBudget budget = budget(1000);
    assertThat(budget.tryCharge(600 - O)).isTrue();
    assertThat(budget.tryCharge(400 - O)).isTrue();
    assertThat(budget.tryCharge(0)).as("an empty message counts its overhead").isFalse();
    assertThat(budget.charged()).isEqualTo(1000);
    budget.release(400 - O);
    assertThat(budget.tryCharge(300 - O)).isTrue();
    assertThat(budget.charged()).isEqualTo(900);
  }

  @Test
  void aMessageLargerThanTheLimit_fitsWhenNothingElseWaits_only() {
    UnreadBudget budget = budget(1000);
    assertThat(budget.tryCharge(5000)).as("nothing waits: a reader that keeps up gets it").isTrue();
    assertThat(budget.tryCharge(0)).isFalse();
    budget.release(5000);
    Queue q = new Queue();
    assertThat(q.offer(budget, 5000)).isTrue();
    assertThat(q.offer(budget, 5000)).as("its own first one still waits").isFalse();
    q.waiting = 0;
    clock.advance(Duration.ofMillis(1));
    assertThat(q.offer(budget, 5000)).as("read: nothing waits again").isTrue();
  }

  @Test
  void anAccountsCharge_isWhatWaitsWhenItsNextMessageComes() {
    UnreadBudget budget = budget(1000);
    Queue q = new Queue();
    assertThat(q.offer(budget, 700)).isTrue();
    q.waiting = 0; // the reader took it
    assertThat(budget.charged()).as("not seen yet").isEqualTo(700);
    assertThat(q.offer(budget, 800)).as("700 no longer wait").isTrue();
    assertThat(budget.charged()).isEqualTo(800);
  }

  @Test
  void whatReadersTookOnOtherStreams_isReadAgainBeforeAChargeIsRefused() {
    UnreadBudget budget = budget(1000);
    Queue taken = new Queue();
    Queue other = new Queue();
    assertThat(taken.offer(budget, 900)).isTrue();
    taken.waiting = 0; // read, and no message since
    assertThat(other.offer(budget, 500)).as("the 900 were taken").isTrue();
    assertThat(budget.charged()).isEqualTo(500);
    assertThat(new Queue().offer(budget, 501)).as("500 really wait").isFalse();
    assertThat(budget.recount()).isEqualTo(500);
  }

  @Test
  void aRefusalReadsTheAccountsAgainAtMostOncePerInterval() {
    UnreadBudget budget = budget(1000);
    Queue a = new Queue();
    assertThat(a.offer(budget, 900)).isTrue();
    assertThat(new Queue().offer(budget, 200)).as("the walk finds 900 waiting").isFalse();
    a.waiting = 0;
    assertThat(new Queue().offer(budget, 200))
        .as("within the interval the count is taken as it is")
        .isFalse();
    assertThat(budget.tryCharge(200 - O)).isFalse();
    clock.advance(Duration.ofNanos(UnreadBudget.RECONCILE_INTERVAL_MICROS * 1_000));
    assertThat(budget.tryCharge(200 - O)).as("an interval on, the accounts are read").isTrue();
    assertThat(budget.charged()).isEqualTo(200);
  }

  @Test
  void theIntervalGrowsWithTheAccountsListed() {
    UnreadBudget budget = budget(1_000_000);
    List<Queue> many = new ArrayList<>();
    for (int i = 0; i < 2 * UnreadBudget.ACCOUNTS_PER_INTERVAL; i++) { // 1,024 listed
      Queue q = new Queue();
      assertThat(q.offer(budget, 900)).isTrue();
      many.add(q);
    }
    long tooMuch = 1_000_000 - budget.charged() + 1;
    assertThat(new Queue().offer(budget, tooMuch)).as("a walk: nothing freed").isFalse();
    many.forEach(q -> q.waiting = 0);
    clock.advance(Duration.ofMillis(2));
    assertThat(new Queue().offer(budget, tooMuch))
        .as("1,024 listed: three intervals between walks")
        .isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(new Queue().offer(budget, tooMuch)).isTrue();
  }

  @Test
  void noWalk_whenTheExactChargesAloneLeaveNoRoom() {
    UnreadBudget budget = budget(1000);
    Queue a = new Queue();
    assertThat(a.offer(budget, 300)).isTrue();
    a.waiting = 0;
    assertThat(budget.tryCharge(800 - O)).as("walks: a's 300 are gone").isTrue();
    assertThat(a.offer(budget, 100)).isTrue();
    a.waiting = 0;
    clock.advance(Duration.ofMillis(10));
    assertThat(budget.tryCharge(300 - O)).as("800 exact + 300 > 1000 whatever a holds").isFalse();
    assertThat(budget.charged()).as("no walk was made: a's stale 100 still counted").isEqualTo(900);
    assertThat(budget.tryCharge(200 - O)).as("a walk may help this one").isTrue();
    assertThat(budget.charged()).isEqualTo(1000);
  }

  @Test
  void anAccountRefused_isStillChargedWhatWaitsInIt_untilItsReaderTakesIt() {
    UnreadBudget budget = budget(1000);
    Queue a = new Queue();
    assertThat(a.offer(budget, 600)).isTrue();
    Queue b = new Queue();
    b.waiting = 300; // (queued off the loop, say, before the budget saw it)
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
  void offTheLoop_aMessageIsLetThroughUncounted_andCountedWithTheNextOnTheLoop() {
    UnreadBudget offLoop = new UnreadBudget(1000, GlobalEventExecutor.INSTANCE, clock);
    Queue q = new Queue();
    assertThat(q.offer(offLoop, 5000)).isTrue();
    assertThat(offLoop.charged()).isZero();
    offLoop.release(100); // (a loop that has shut down: nothing to give back)
    assertThat(offLoop.charged()).isZero();
    UnreadBudget onLoop = budget(1000);
    assertThat(q.offer(onLoop, 100)).as("its 5000 waiting, counted now").isFalse();
    assertThat(onLoop.charged()).isEqualTo(5000);
  }

  @Test
  void endedStreamsAccounts_doNotPileUp_overAConnectionsLife() {
    UnreadBudget budget = budget(1L << 40);
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
        .isLessThanOrEqualTo(2 * Math.max(UnreadBudget.FIRST_SWEEP, live.size()))
        .isGreaterThanOrEqualTo(live.size());
    assertThat(budget.recount()).isEqualTo(100L * live.size());
    assertThat(budget.listed()).isEqualTo(live.size());
  }
}
