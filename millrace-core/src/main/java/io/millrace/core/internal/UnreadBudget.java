package io.millrace.core.internal;

import io.millrace.core.Connection;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The bytes of received messages that wait, on one connection, for readers that have not taken
 * them: at most {@link io.millrace.core.ConnectionConfig#maxUnreadBytes()}. Each reader's queue is
 * bounded on its own (a stream's backlog limit); this bounds their sum, which a peer that opens
 * many streams to slow readers could otherwise make the credit of every stream times the largest
 * message. Event-loop confined: only the loop charges it, and the charges need no atomic operation.
 *
 * <p>Two kinds of queue charge it. One the loop both fills and empties (a subscriber's prefetch
 * queue) charges what it adds and gives back what it hands on or drops: {@link #tryCharge}, {@link
 * #release}, exact. One that a reader on another thread empties (a blocking reader's) is an {@link
 * Account}: as the loop queues each message it charges what the queue holds then, learning what the
 * reader has taken from the reader's own count ({@link Account#waitingNow}); what the reader takes
 * later stays charged until the account's next message. So the sum may count more than waits, never
 * less. When a charge would pass the limit, every account is read again first (at most once per
 * {@value #RECONCILE_INTERVAL_MICROS} microseconds, so that a peer cannot make each of its frames
 * cost a walk over all its streams), and then the charge is decided.
 *
 * <p>Accounts are listed while they hold a charge. The list is also read again, and the accounts
 * with nothing waiting dropped from it, whenever it has doubled since it last was, so that a
 * connection that lives for days does not keep the accounts of its ended streams: each listing pays
 * for a bounded share of one walk.
 */
public final class UnreadBudget {
  /**
   * The least time between two walks over the accounts made because a charge would pass the limit.
   */
  static final long RECONCILE_INTERVAL_MICROS = 1_000;

  private static final long RECONCILE_INTERVAL = TimeUnit.MICROSECONDS.toNanos(1_000);

  /** The fewest listed accounts at which the list is walked for having grown. */
  static final int FIRST_SWEEP = 64;

  /**
   * A queue of one stream that a reader on another thread empties, as the budget sees it. The
   * subclass keeps the counts; the budget keeps the charge. Its methods are the loop's.
   */
  public abstract static class Account {
    private long charge; // what the budget counts for it: the loop's
    private int index = -1; // its place in the list, or -1 when not listed

    /**
     * The bytes that wait in the queue now: those queued, less those the reader has taken by its
     * own count, or 0 once the queue has been dropped. The loop calls it, any time.
     */
    protected abstract long waitingNow();
  }

  /** Whatever can tell the budget of the connection a reader's messages come from. */
  public interface Source {
    /**
     * The budget of the connection whose messages this hands on, or null when none (not on a
     * connection, or not known yet). The loop calls it, after a message has come.
     */
    UnreadBudget unreadBudget();
  }

  private final long limit;
  private final Timers clock;
  private long charged;
  private Account[] accounts = new Account[8];
  private int listed;
  private int sweepAt = FIRST_SWEEP;
  private long lastReconcile;
  private boolean reconciled;

  UnreadBudget(long limit, Timers clock) {
    this.limit = limit;
    this.clock = clock;
  }

  /** The budget of {@code connection}, or null when it is not one of the engine's. */
  public static UnreadBudget of(Connection connection) {
    return connection instanceof ConnectionEngine engine ? engine.unread : null;
  }

  /** The most bytes that may wait. */
  public long limit() {
    return limit;
  }

  /** The bytes counted as waiting now: exact but for accounts' readers' progress not yet seen. */
  public long charged() {
    return charged;
  }

  /**
   * Charges {@code bytes} that a queue the loop empties is to hold. Returns false, charging
   * nothing, when they would take the connection past its limit.
   */
  public boolean tryCharge(long bytes) {
    if (charged + bytes > limit && !reconciledToFit(bytes)) {
      return false;
    }
    charged += bytes;
    return true;
  }

  /** Gives back {@code bytes} charged by {@link #tryCharge}: handed to the reader, or dropped. */
  public void release(long bytes) {
    charged -= bytes;
  }

  /**
   * A message of {@code size} bytes comes to {@code account}'s queue, in which {@code waiting}
   * bytes wait now (what {@link Account#waitingNow} would say). Returns true when it may be queued
   * (charged), false when it would take the connection past its limit (then the account is charged
   * what waits, without it).
   */
  public boolean admit(Account account, long waiting, long size) {
    recharge(account, waiting);
    boolean fits = charged + size <= limit || reconciledToFit(size);
    if (fits) {
      charged += size;
      account.charge += size;
    }
    if (account.index < 0 && account.charge > 0) {
      list(account); // (a walk may have unlisted it)
    }
    return fits;
  }

  private void recharge(Account account, long waiting) {
    charged += waiting - account.charge;
    account.charge = waiting;
  }

  /**
   * After a charge of {@code bytes} was found not to fit: reads every account again, unless that
   * was done less than {@link #RECONCILE_INTERVAL_MICROS} ago, and says whether it fits now.
   */
  private boolean reconciledToFit(long bytes) {
    long now = clock.nanoTime();
    if (reconciled && now - lastReconcile < RECONCILE_INTERVAL) {
      return false;
    }
    reconciled = true;
    lastReconcile = now;
    reconcile();
    return charged + bytes <= limit;
  }

  /** Reads every listed account again, and unlists those with nothing waiting. */
  private void reconcile() {
    for (int i = 0; i < listed; ) {
      Account a = accounts[i];
      recharge(a, a.waitingNow());
      if (a.charge == 0) {
        unlist(i); // the last one moves to i: read it next
      } else {
        i++;
      }
    }
  }

  private void list(Account account) {
    if (listed >= sweepAt) {
      reconcile();
      sweepAt = Math.max(FIRST_SWEEP, 2 * listed);
    }
    if (listed == accounts.length) {
      accounts = Arrays.copyOf(accounts, 2 * listed);
    }
    account.index = listed;
    accounts[listed++] = account;
  }

  private void unlist(int i) {
    Account gone = accounts[i];
    Account last = accounts[--listed];
    accounts[i] = last;
    last.index = i;
    accounts[listed] = null;
    gone.index = -1;
  }

  /** How many accounts are listed: for tests. */
  int listed() {
    return listed;
  }
}
