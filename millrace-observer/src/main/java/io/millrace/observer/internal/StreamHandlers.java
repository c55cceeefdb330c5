package io.millrace.observer.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the StreamObserver flavour runs stream and channel handlers when the application gave no
 * executor: one executor for the process, made on first use.
 *
 * <p>Such a handler may call {@code onNext} in a loop, as grpc-java code does, and must then wait
 * inside {@code onNext} while the peer is behind, which it cannot do on an event loop. So it runs
 * here, where it may hold a thread for as long as its peer is slow: a virtual thread per handler on
 * JDK 21+, else a platform thread from a pool that reuses idle ones and has at most {@value
 * #MAX_PLATFORM_THREADS} (a peer that opens thousands of streams and never reads must not make a
 * thread for each). A handler that finds the pool full is refused, and its call fails with
 * REJECTED; a server that needs more handlers waiting at once on JDK 17 gives the responder an
 * executor of its own. The pool's threads are daemons named {@code millrace-observer-N} that end
 * after a minute idle. Each connection sees the pool through {@link #forConnection}: on JDK 17 it
 * may hold at most {@value #CONNECTION_SHARE} of its threads, so that one peer that opens many
 * streams and never reads cannot hold them all and have every other connection's handlers refused;
 * and the pool's last {@value #RESERVED} threads are kept for connections running fewer than
 * {@value #LIGHT} handlers, so that several such peers together cannot either (four of them could
 * hold every thread with the share alone).
 */
public final class StreamHandlers {
  /** Platform threads at most, where the JDK has no virtual threads. */
  public static final int MAX_PLATFORM_THREADS = 1024;

  private static final System.Logger LOG = System.getLogger(StreamHandlers.class.getName());

  private static final java.util.concurrent.atomic.AtomicLong REFUSED =
      new java.util.concurrent.atomic.AtomicLong();

  private StreamHandlers() {}

  /**
   * Logs a refused handler: the first, then at each power of two, with the count, so that a peer
   * that makes the pool refuse calls cannot flood the log from the event loop.
   */
  static void refused(java.util.concurrent.RejectedExecutionException e) {
    long n = REFUSED.incrementAndGet();
    if (Long.bitCount(n) == 1) {
      LOG.log(
          System.Logger.Level.WARNING,
          "the stream handler executor refused a call (" + n + " so far): " + e);
    }
  }

  /** The platform threads one connection's handlers may hold at once (JDK 17). */
  public static final int CONNECTION_SHARE = MAX_PLATFORM_THREADS / 4;

  /**
   * The pool's threads kept for connections running fewer than {@link #LIGHT} handlers: a
   * connection running more gets none while fewer than this are free.
   */
  public static final int RESERVED = MAX_PLATFORM_THREADS / 4;

  /** Handlers a connection may always run while the pool has threads (JDK 17). */
  public static final int LIGHT = 16;

  /** What every connection's share of the shared pool draws on. */
  private static final Budget BUDGET = new Budget(MAX_PLATFORM_THREADS - RESERVED, LIGHT);

  /** The shared executor, made on first use. */
  public static Executor shared() {
    return Holder.SHARED;
  }

  /**
   * The shared executor as one connection uses it: itself where handlers get virtual threads (no
   * threads to run out of), else a {@link Share} of {@value #CONNECTION_SHARE} of the pool's.
   */
  public static Executor forConnection() {
    return Holder.VIRTUAL ? Holder.SHARED : new Share(Holder.SHARED, CONNECTION_SHARE, BUDGET);
  }

  private static final class Holder {
    static final Executor VIRTUAL_THREADS = virtualThreads();
    static final boolean VIRTUAL = VIRTUAL_THREADS != null;
    static final Executor SHARED = VIRTUAL ? VIRTUAL_THREADS : platformPool(MAX_PLATFORM_THREADS);
  }

  private static Executor virtualThreads() {
    try {
      return (Executor) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  /**
   * What the connections' shares of one pool draw on together: the tasks they run, of which those
   * past a connection's first {@code light} may make at most {@code heavyMax} in all.
   */
  public static final class Budget {
    private final AtomicInteger running = new AtomicInteger();
    private final int heavyMax;
    private final int light;

    public Budget(int heavyMax, int light) {
      this.heavyMax = heavyMax;
      this.light = light;
    }
  }

  /**
   * At most {@code max} tasks of one connection running at once on {@code pool}, and past its first
   * few only while the {@link Budget} keeps threads for others; one more is refused
   * (RejectedExecutionException), as the pool refuses one when all its threads are busy.
   */
  public static final class Share implements Executor {
    private final Executor pool;
    private final int max;
    private final Budget budget;
    private final AtomicInteger running = new AtomicInteger();

    /** A share with no budget beside its own {@code max}. */
    public Share(Executor pool, int max) {
      this(pool, max, new Budget(Integer.MAX_VALUE, 0));
    }

    public Share(Executor pool, int max, Budget budget) {
      this.pool = pool;
      this.max = max;
      this.budget = budget;
    }

    @Override
    public void execute(Runnable task) {
      int mine = running.incrementAndGet();
      if (mine > max) {
        running.decrementAndGet();
        throw new java.util.concurrent.RejectedExecutionException(
            "this connection's " + max + " stream handlers are all running");
      }
      int all = budget.running.incrementAndGet();
      if (mine > budget.light && all > budget.heavyMax) {
        ended();
        throw new java.util.concurrent.RejectedExecutionException(
            "the stream handler threads left are kept for connections running fewer than "
                + budget.light
                + " (this one runs "
                + (mine - 1)
                + ")");
      }
      try {
        pool.execute(
            () -> {
              try {
                task.run();
              } finally {
                ended();
              }
            });
      } catch (Throwable e) {
        ended();
        throw e;
      }
    }

    private void ended() {
      running.decrementAndGet();
      budget.running.decrementAndGet();
    }
  }

  /**
   * A pool of up to {@code max} daemon threads that gives each task an idle thread or a new one and
   * refuses it when all {@code max} are busy (no queue: a queued stream handler would wait behind
   * ones that may wait for slow peers for ever).
   */
  public static ThreadPoolExecutor platformPool(int max) {
    AtomicInteger names = new AtomicInteger();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "millrace-observer-" + names.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    return new ThreadPoolExecutor(0, max, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), factory);
  }
}
