package io.millrace.core.internal;

import static io.millrace.core.internal.UnreadBudget.MESSAGE_OVERHEAD;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.ConnectionConfig;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    assertThat(UnreadBudget.of((io.millrace.core.Connection) null)).isNull();
  }

  @Test
  void aQueueTheLoopEmpties_isCountedExactly_eachMessageWithItsOverhead() {
    UnreadBudget budget = budget(1000);
    Queue q = new Queue();
    assertThat(q.offer(budget, 600)).isTrue();
    assertThat(q.offer(budget, 400)).isTrue();
    assertThat(q.offer(budget, O)).as("an empty message counts its overhead").isFalse();
    assertThat(budget.charged()).isEqualTo(1000);
    q.waiting -= 400;
    budget.update(q, q.waiting); // handed on
    assertThat(budget.charged()).isEqualTo(600);
    assertThat(q.offer(budget, 300)).isTrue();
    q.waiting = 0;
    budget.update(q, 0); // dropped
    assertThat(budget.charged()).isZero();
  }

  @Test
  void aMessageLargerThanTheLimit_fitsWhenNothingElseIsCounted_only() {
    UnreadBudget budget = budget(1000);
    Queue q = new Queue();
    assertThat(q.offer(budget, 5000)).as("nothing waits: a reader that keeps up gets it").isTrue();
    assertThat(q.offer(budget, 5000)).as("its own first one still waits").isFalse();
    assertThat(new Queue().offer(budget, O)).isFalse();
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
    clock.advance(Duration.ofMillis(1)); // (a walk now would find them)
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
    clock.advance(Duration.ofNanos(UnreadBudget.RECONCILE_INTERVAL_MICROS * 1_000 - 1));
    assertThat(new Queue().offer(budget, 200)).isFalse();
    clock.advance(Duration.ofNanos(1));
    assertThat(new Queue().offer(budget, 200)).as("an interval on, the accounts are read").isTrue();
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
  void offTheLoop_aMessageIsLetThrough_andTheLoopCountsItsQueueWhenAsked() throws Exception {
    DefaultEventExecutor loop = new DefaultEventExecutor();
    try {
      UnreadBudget budget = new UnreadBudget(1000, loop, clock);
      Queue q = new Queue();
      assertThat(budget.onLoop()).isFalse();
      assertThat(q.offer(budget, 5000)).as("queued off the loop: not refused").isTrue();
      assertThat(loop.submit(budget::charged).get(10, TimeUnit.SECONDS)).as("not yet").isZero();
      budget.recountLater(q); // as a Backlog does once the message is in its queue
      assertThat(loop.submit(budget::charged).get(10, TimeUnit.SECONDS))
          .as("counted on the loop")
          .isEqualTo(5000);
      budget.update(q, 0); // off the loop: nothing
      assertThat(loop.submit(budget::charged).get(10, TimeUnit.SECONDS)).isEqualTo(5000);
      assertThat(loop.submit(() -> q.offer(budget, 100)).get(10, TimeUnit.SECONDS))
          .as("its 5000 wait")
          .isFalse();
      assertThat(loop.submit(budget::refusals).get(10, TimeUnit.SECONDS)).isEqualTo(1);
    } finally {
      loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
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
