package io.millrace.core.internal;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.netty.util.concurrent.EventExecutor;
import java.util.Arrays;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The bytes of received messages that wait, on one connection, for readers that have not taken
 * them: at most {@link io.millrace.core.ConnectionConfig#maxUnreadBytes()}. Each reader's queue is
 * bounded on its own (a stream's backlog limit); this bounds their sum, which a peer that opens
 * many streams to slow readers could otherwise make the credit of every stream times the largest
 * message. Each message counts its bytes and {@value #MESSAGE_OVERHEAD} more, so that floods of
 * empty ones count too.
 *
 * <p>Every queue that holds received messages for a reader is an {@link Account}. As the loop
 * queues a message it charges the account what the queue holds then ({@link #admit}). A queue the
 * loop also empties (a subscriber's prefetch queue) says so as it does ({@link #update}), so its
 * charge is exact. One that a reader on another thread empties (a blocking reader's) is read from
 * the reader's own count ({@link Account#waitingNow}): what the reader takes stays charged until
 * the account's next message, so the sum may count more than waits. When a charge would pass the
 * limit, every account is read again first, and then the charge is decided. A peer must not make
 * each of its frames cost a walk over all its streams: a walk comes at most once per {@value
 * #RECONCILE_INTERVAL_MICROS} microseconds for each {@value #ACCOUNTS_PER_INTERVAL} accounts
 * listed, and within that interval a charge is decided on the counts as they are (which may still
 * hold what readers have taken). A message is always let through when nothing else is counted as
 * waiting, so that one larger than the limit still reaches a reader that keeps up.
 *
 * <p>Event-loop confined: charges need no atomic operation. A message queued on another thread (a
 * blocking handler's first, which the handler's own thread takes) is let through, never refused,
 * and a task on the loop counts what waits in its queue from then on ({@link #recountLater}).
 *
 * <p>Accounts are listed once charged, and unlisted by a walk that finds nothing waiting in them.
 * The list is also read again whenever it has doubled since it last was, so that a connection that
 * lives for days does not keep the accounts of its ended streams: each listing pays for a bounded
 * share of one walk. An account whose reader has gone (collected without closing its queue) must
 * say that nothing waits.
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
   * A queue of one stream, as the budget sees it. The subclass keeps the counts; the budget keeps
   * the charge. Its methods are the loop's.
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
  private long charged; // the accounts' charges
  private long refusals;
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

  /**
   * The budget of the connection {@code stream}'s messages come on: its connection's, or for a
   * stream of a reconnecting connection, the connection it was sent on; null when none.
   */
  public static UnreadBudget of(Stream stream) {
    Connection c = stream.connection();
    return c instanceof ConnectionEngine engine
        ? engine.unread
        : c instanceof ReconnectingConnection
            ? ReconnectingConnection.unreadBudgetOf(stream)
            : null;
  }

  /** Whether the calling thread is the loop, which alone charges this budget. */
  public boolean onLoop() {
    return loop.inEventLoop();
  }

  /** The most bytes that may wait. */
  public long limit() {
    return limit;
  }

  /** The bytes counted as waiting now: exact but for accounts' readers' progress not yet seen. */
  public long charged() {
    return charged;
  }

  /** How many messages this budget has refused: for diagnostics and tests. The loop only. */
  public long refusals() {
    return refusals;
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
   * A message of {@code size} bytes comes to {@code account}'s queue, in which {@code waiting}
   * bytes wait now (what {@link Account#waitingNow} would say). Returns true when it may be queued
   * (charged), false when it would take the connection past its limit (then the account is charged
   * what waits, without it). Off the loop it is let through, uncounted: once the caller has counted
   * it in the account ({@link Account#waitingNow}), it has the loop count it ({@link
   * #recountLater}).
   */
  public boolean admit(Account account, long waiting, long size) {
    return !loop.inEventLoop() || admitOnLoop(account, waiting, size);
  }

  /** {@link #admit} from a caller that knows it is on the loop ({@link #onLoop}). */
  public boolean admitOnLoop(Account account, long waiting, long size) {
    recharge(account, waiting);
    long bytes = size + MESSAGE_OVERHEAD;
    boolean fits = fits(bytes);
    if (fits) {
      charged += bytes;
      account.charge += bytes;
    } else {
      refusals++;
    }
    listIfCharged(account); // (a walk may have unlisted it)
    return fits;
  }

  /**
   * {@code account}'s queue holds {@code waiting} bytes now: for a queue the loop empties, as it
   * does. Off the loop (a loop that has shut down) it does nothing.
   */
  public void update(Account account, long waiting) {
    if (loop.inEventLoop()) {
      recharge(account, waiting);
      listIfCharged(account);
    }
  }

  /**
   * Has the loop count what waits in {@code account} soon: a message was counted in it on another
   * thread (after {@link #admit} let it through there), to be queued. Any thread; what the caller
   * wrote before is seen by the loop.
   */
  public void recountLater(Account account) {
    try {
      loop.execute(() -> update(account, account.waitingNow()));
    } catch (RejectedExecutionException e) {
      // the loop has shut down: the connection, and its budget, are gone
    }
  }

  private void listIfCharged(Account account) {
    if (account.index < 0 && account.charge > 0) {
      list(account);
    }
  }

  private void recharge(Account account, long waiting) {
    charged += waiting - account.charge;
    account.charge = waiting;
  }

  /** Whether {@code bytes} more fit, reading the accounts again if that may make room. */
  private boolean fits(long bytes) {
    return charged + bytes <= limit || charged == 0 || reconciledToFit(bytes);
  }

  /**
   * After a charge of {@code bytes} was found not to fit: reads every account again, unless the
   * last walk was too recent, and says whether it fits now (or nothing waits at all).
   */
  private boolean reconciledToFit(long bytes) {
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
