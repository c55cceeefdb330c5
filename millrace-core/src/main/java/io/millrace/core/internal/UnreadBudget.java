package io.millrace.core.internal;

import io.millrace.core.Connection;
import io.netty.util.concurrent.EventExecutor;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The bytes of received messages that wait, on one connection, for readers that have not taken
 * them: at most {@link io.millrace.core.ConnectionConfig#maxUnreadBytes()}. Each reader's queue is
 * bounded on its own (a stream's backlog limit); this bounds their sum, which a peer that opens
 * many streams to slow readers could otherwise make the credit of every stream times the largest
 * message. Each message counts its bytes and {@value #MESSAGE_OVERHEAD} more, so that floods of
 * empty ones count too.
 *
 * <p>Event-loop confined: charges need no atomic operation. A call from another thread (a blocking
 * handler's first request, which the handler's own thread takes) is not counted then: {@link
 * #admit} lets it through and {@link #release} ignores it. An account's next message, on the loop,
 * counts what waits in it whichever thread queued it.
 *
 * <p>Two kinds of queue charge it. One the loop both fills and empties (a subscriber's prefetch
 * queue) charges what it adds and gives back what it hands on or drops: {@link #tryCharge}, {@link
 * #release}, exact. One that a reader on another thread empties (a blocking reader's) is an {@link
 * Account}: as the loop queues each message it charges what the queue holds then, learning what the
 * reader has taken from the reader's own count ({@link Account#waitingNow}); what the reader takes
 * later stays charged until the account's next message. So the sum may count more than waits. When
 * a charge would pass the limit, every account is read again first, and then the charge is decided.
 * A peer must not make each of its frames cost a walk over all its streams: a walk comes at most
 * once per {@value #RECONCILE_INTERVAL_MICROS} microseconds for each {@value
 * #ACCOUNTS_PER_INTERVAL} accounts listed, and not at all when the exact charges alone leave no
 * room. A message is always let through when nothing else waits on the connection, so that one
 * larger than the limit still reaches a reader that keeps up.
 *
 * <p>Accounts are listed while they hold a charge. The list is also read again, and the accounts
 * with nothing waiting dropped from it, whenever it has doubled since it last was, so that a
 * connection that lives for days does not keep the accounts of its ended streams: each listing pays
 * for a bounded share of one walk.
 */
public final class UnreadBudget {
  /** Bytes each waiting message counts beyond its own: about what holds it (objects, a slice). */
  public static final int MESSAGE_OVERHEAD = 64;

  /** The least time between two walks over the accounts made because a charge would not fit. */
  static final long RECONCILE_INTERVAL_MICROS = 1_000;

  private static final long RECONCILE_INTERVAL =
      TimeUnit.MICROSECONDS.toNanos(RECONCILE_INTERVAL_MICROS);

  /** Accounts a walk may read per interval: more listed, longer intervals. */
  static final int ACCOUNTS_PER_INTERVAL = 512;

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
     * The bytes that wait in the queue now ({@value #MESSAGE_OVERHEAD} more for each message): 0
     * once the queue has been dropped, or its reader has gone. The loop calls it, any time.
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
  private final EventExecutor loop;
  private final Timers clock;
  private long charged; // exact charges and accounts' charges
  private long accountsCharged; // the accounts' share of it
  private Account[] accounts = new Account[8];
  private int listed;
  private int sweepAt = FIRST_SWEEP;
  private long lastReconcile;
  private boolean reconciled;

  UnreadBudget(long limit, EventExecutor loop, Timers clock) {
    this.limit = limit;
    this.loop = loop;
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
   * Reads every account again and returns the bytes that wait now: for diagnostics and tests. The
   * loop only.
   */
  public long recount() {
    reconcile();
    return charged;
  }

  /**
   * Charges a message of {@code size} bytes that a queue the loop empties is to hold. Returns
   * false, charging nothing, when it would take the connection past its limit. The loop only.
   */
  public boolean tryCharge(long size) {
    long bytes = size + MESSAGE_OVERHEAD;
    if (!fits(bytes)) {
      return false;
    }
    charged += bytes;
    return true;
  }

  /**
   * Gives back a message of {@code size} bytes charged by {@link #tryCharge}: handed to the reader,
   * or dropped. Off the loop (a loop that has shut down) it does nothing.
   */
  public void release(long size) {
    if (loop.inEventLoop()) {
      charged -= size + MESSAGE_OVERHEAD;
    }
  }

  /**
   * A message of {@code size} bytes comes to {@code account}'s queue, in which {@code waiting}
   * bytes wait now (what {@link Account#waitingNow} would say). Returns true when it may be queued
   * (charged), false when it would take the connection past its limit (then the account is charged
   * what waits, without it). Off the loop it is let through uncounted.
   */
  public boolean admit(Account account, long waiting, long size) {
    if (!loop.inEventLoop()) {
      return true; // counted with the account's next message on the loop
    }
    recharge(account, waiting);
    long bytes = size + MESSAGE_OVERHEAD;
    boolean fits = fits(bytes);
    if (fits) {
      charged += bytes;
      accountsCharged += bytes;
      account.charge += bytes;
    }
    if (account.index < 0 && account.charge > 0) {
      list(account); // (a walk may have unlisted it)
    }
    return fits;
  }

  private void recharge(Account account, long waiting) {
    long delta = waiting - account.charge;
    charged += delta;
    accountsCharged += delta;
    account.charge = waiting;
  }

  /** Whether {@code bytes} more fit, reading the accounts again if that may make room. */
  private boolean fits(long bytes) {
    return charged + bytes <= limit || charged == 0 || reconciledToFit(bytes);
  }

  /**
   * After a charge of {@code bytes} was found not to fit: reads every account again, unless the
   * exact charges alone leave no room or the last walk was too recent, and says whether it fits now
   * (or nothing waits at all).
   */
  private boolean reconciledToFit(long bytes) {
    if (charged - accountsCharged + bytes > limit && charged != accountsCharged) {
      return false; // the accounts could all be empty and it would still not fit
    }
    long now = clock.nanoTime();
    long interval = RECONCILE_INTERVAL * (1 + listed / ACCOUNTS_PER_INTERVAL);
    if (reconciled && now - lastReconcile < interval) {
      return false;
    }
    reconciled = true;
    lastReconcile = now;
    reconcile();
    return charged + bytes <= limit || charged == 0;
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
