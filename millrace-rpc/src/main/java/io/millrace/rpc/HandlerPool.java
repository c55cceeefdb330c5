package io.millrace.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Blocking handlers' threads where the JDK has no virtual threads: a few threads for handlers that
 * do not block, and more only while handlers are blocked.
 *
 * <p>Contract: up to {@link Blocking#MAX_PLATFORM_HANDLERS} handlers run at once, blocked ones
 * included (more calls wait their turn in the queue); threads are daemons named {@code name-N} with
 * the context class loader of the thread that made the pool, and with the first of them a daemon
 * {@code name-watchdog} that lives until the pool terminates (so shut a pool down when done with
 * it); a task's interrupt does not leak into the next task on the same thread; what a task given to
 * {@code execute} throws goes to the thread's uncaught-exception handler and the thread lives on;
 * {@code shutdown} lets queued calls run, {@code shutdownNow} interrupts the running ones and
 * returns the queued ones.
 *
 * <h2>Design</h2>
 *
 * <p>A handler pool cannot see how its handlers block: a JDBC read, a {@code Thread.sleep} or a
 * lock all look the same from outside. The pool this one replaced was a ForkJoinPool whose
 * parallelism was its cap (1,024), so that blocked handlers still got threads: it started a thread
 * whenever a call arrived and none was idle. After every collection pause all of its threads were
 * busy with the calls that had queued during the pause, so it grew with every pause: 124 threads at
 * a 20 MB heap against 23 at 1 GiB in the RPC benchmark (docs/benchmarks.md, "Twenty-fourth
 * session"). Busy is not blocked.
 *
 * <p>So the pool keeps {@code base} threads (twice the processors, at least four) for calls, and a
 * watchdog thread adds more only when calls wait while threads are blocked. Every millisecond in
 * which calls are queued and no thread is idle (every 16 ms after a quiet second), it looks at each
 * thread in a call. Blocked is:
 *
 * <ul>
 *   <li>WAITING or TIMED_WAITING to Java (a sleep, a park, a future's get), or BLOCKED on a monitor
 *       in a call that the previous sample saw too (a monitor that is merely contended would only
 *       gain waiters from more threads);
 *   <li>RUNNABLE to Java but asleep in the kernel on something other than a futex, at two reads in
 *       a row in the same call (so from its third sample). That is a blocking read, accept or disk
 *       access; Linux names where a thread sleeps in {@code /proc/self/task/<id>/wchan} ({@link
 *       KernelThreads}). The JVM's own waits (a collection's safepoint, the heap lock) sleep on
 *       futexes, and more threads would only join them: at a 20 MB heap, handlers caught allocating
 *       were asleep there at two samples in a row, and counting them grew the pool to dozens of
 *       threads again. A thread waiting for a core is not asleep either (the kernel says "0"): a
 *       first version that counted a thread in the same call for two samples as blocked grew the
 *       pool on every busy core. A native library that waits on a futex of its own is not seen.
 * </ul>
 *
 * Where the kernel does not say (not Linux, or {@code /proc} hidden), a thread in the same call for
 * fifty samples in a row without computing (its CPU time standing still) counts as blocked. If the
 * threads that are not blocked number fewer than {@code base}, the watchdog starts the difference,
 * or half as many threads again as the pool has if that is more (so a thousand sleeping handlers
 * have their threads within about fifteen samples), no more than there are calls queued, up to the
 * cap. A backlog that threads are computing through, however long, starts no thread.
 *
 * <p>Hand-off: a call is a node in a lock-free queue, counted in {@code queued}. The caller wakes
 * an idle thread only if the count was zero; a thread that takes a call and leaves more counted
 * wakes one more before it runs its call. So a burst of calls from one event-loop read costs a
 * wake-up or two, not one per call (a cached thread pool wakes or starts a thread per call, which
 * held the blocking flavour near grpc-java's rate: docs/benchmarks.md, "The blocking flavour's
 * hand-offs"). One thread at a time that runs out of calls yields a few times before it parks, so
 * that the next burst finds it awake and the caller wakes nobody. Idle threads wait in a LIFO
 * stack, so the most recently busy one is woken first and the others age out: a thread beyond
 * {@code base} that has been idle for a minute ends.
 *
 * <p>Lost wake-ups: a thread that finds the queue empty pushes itself on the idle stack and then
 * looks at the queue again before it parks. A caller counts its call, offers it, and wakes a thread
 * from the stack if the count was zero and no thread is spinning. All of these are atomic accesses,
 * so either the thread sees the call or the caller finds the thread. If the count was not zero, an
 * earlier call is queued or has just been taken by a thread that has yet to lower the count; that
 * thread, seeing more counted, wakes one more (or starts one below the base). The thread it wakes
 * may find nothing yet, if this caller has counted but not offered: so a thread about to park while
 * the count is ahead of the queue sets {@code owed} and looks once more, and a caller that wakes
 * nobody looks at {@code owed} after its offer and wakes a thread if it is set. Threads never wait
 * for the count to match the queue: one that did so spun while the caller it waited for had no core
 * (42 threads spinning at 1,000 clients). The watchdog, which wakes an idle thread whenever calls
 * are queued, is a backstop, not part of the argument.
 */
final class HandlerPool extends AbstractExecutorService {
  /**
   * The most threads. With no cap, a downstream service that hangs would make a thread per waiting
   * call (found by a review of the pool before this one; HandlerExecutorTest). At the cap further
   * calls queue. The price: handlers that wait for calls served by this same pool (a service
   * calling another method of its own server) can all be waiting, at the cap, for calls queued
   * behind them, until their deadlines end them; bind such services to separate executors.
   */
  static final int MAX_THREADS = Blocking.MAX_PLATFORM_HANDLERS;

  private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(60);
  private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** After this many samples with nothing queued, the watchdog samples less often. */
  private static final int QUIET_SAMPLES = 1_000;

  private static final long QUIET_SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(16);

  /** A thread the system refused to start; the watchdog waits this long before it tries again. */
  private static final long START_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * Samples in the same call, RUNNABLE, before a thread counts as blocked where the kernel does not
   * say where threads sleep: long enough that a thread waiting for a core on a busy machine seldom
   * passes for a blocked one.
   */
  private static final int STUCK_SAMPLES_UNSEEN = 50;

  /** Samples for which a thread asleep in the kernel stays counted before it is read again. */
  private static final int RECHECK_SAMPLES = 8;

  /**
   * Yields before a thread with nothing to do parks: the next burst of calls then finds it awake
   * and costs the caller (an event loop) no unpark. Eight against none, alternating pairs of RPC
   * request-response with the blocking flavour (docs/benchmarks.md, "Twenty-fifth session").
   */
  private static final int SPINS = 8;

  /** The most threads that yield at once before parking. */
  private static final int SPINNERS = 1;

  /** {@code live} once the pool has terminated: no thread can be counted after that. */
  private static final int CLOSED = Integer.MIN_VALUE;

  private static final int RUNNING = 0;
  private static final int SHUTDOWN = 1;
  private static final int STOP = 2;
  private static final int TERMINATED = 3;

  private final String name;
  private final ClassLoader loader;
  private final int base;
  private final long keepAliveNanos;
  private final long sampleNanos;
  private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedDeque<Worker> idle = new ConcurrentLinkedDeque<>();
  private final Set<Worker> workers = ConcurrentHashMap.newKeySet();

  /**
   * Calls offered or about to be, not yet taken: raised before the offer and lowered after the
   * poll, so never below the queue's length. A caller whose raise finds zero wakes a thread; a
   * thread whose lowering leaves more wakes one more (see "Lost wake-ups" above).
   */
  private final AtomicInteger queued = new AtomicInteger();

  private final AtomicInteger live = new AtomicInteger();

  /** Threads yielding before they park; see {@link Worker#spin}. */
  private final AtomicInteger spinners = new AtomicInteger();

  private final AtomicInteger names = new AtomicInteger();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final Object lifecycle = new Object();
  private final Thread watchdog;
  private final AtomicBoolean watching = new AtomicBoolean();
  private volatile int state = RUNNING;

  /** Set by a thread that parked while a call was counted but not yet queued; see execute. */
  private final AtomicBoolean owed = new AtomicBoolean();

  private volatile Throwable startFailed;

  /** Watchdog thread only. */
  private long startFailedAt = System.nanoTime() - START_RETRY_NANOS - 1;

  private boolean startFailureReported;

  HandlerPool(String name) {
    this(name, Math.max(4, 2 * Runtime.getRuntime().availableProcessors()), KEEP_ALIVE_NANOS);
  }

  /**
   * A pool of {@code base} threads for calls that do not block, more while calls block; a thread
   * beyond {@code base} ends when it has been idle for {@code keepAliveNanos}.
   */
  HandlerPool(String name, int base, long keepAliveNanos) {
    this(name, base, keepAliveNanos, SAMPLE_NANOS);
  }

  /** As above, with the watchdog sampling every {@code sampleNanos} (tests slow it down). */
  HandlerPool(String name, int base, long keepAliveNanos, long sampleNanos) {
    if (base < 1 || base > MAX_THREADS) {
      throw new IllegalArgumentException("base threads " + base + " not in 1.." + MAX_THREADS);
    }
    if (keepAliveNanos <= 0) {
      throw new IllegalArgumentException("keep-alive " + keepAliveNanos + " ns");
    }
    this.name = name;
    this.keepAliveNanos = keepAliveNanos;
    this.sampleNanos = sampleNanos;
    this.loader = Thread.currentThread().getContextClassLoader();
    this.base = base;
    // No inherited thread-locals: threads start on whichever thread needs them (an event loop).
    this.watchdog = new Thread(null, this::watch, name + "-watchdog", 0, false);
    watchdog.setDaemon(true);
    watchdog.setContextClassLoader(loader);
  }

  @Override
  public void execute(Runnable call) {
    if (call == null) {
      throw new NullPointerException("call");
    }
    if (state != RUNNING) {
      throw new RejectedExecutionException(name + " is shut down");
    }
    boolean first = queued.getAndIncrement() == 0;
    try {
      queue.offer(call);
    } catch (Throwable e) { // out of memory for the node: the count must not stay raised
      queued.decrementAndGet();
      throw e;
    }
    if (state != RUNNING && removeOne(call)) {
      queued.decrementAndGet();
      tryTerminate(); // shutdown may have waited for this call to leave the queue
      throw new RejectedExecutionException(name + " is shut down");
    }
    // A spinning thread takes the call and wakes more if more come: no unpark on this thread.
    if ((first && spinners.get() == 0) || live.get() == 0) {
      wakeOrStart();
    } else if (owed.get() && owed.getAndSet(false)) {
      wakeOrStart(); // a thread parked while this call was counted but not yet in the queue
    }
  }

  /** Removes this call (this instance, once: the same Runnable may be queued twice). */
  private boolean removeOne(Runnable call) {
    for (Iterator<Runnable> it = queue.iterator(); it.hasNext(); ) {
      if (it.next() == call) {
        it.remove();
        return true;
      }
    }
    return false;
  }

  /** Wakes an idle thread, else starts one if the pool has fewer than {@code base}. */
  private void wakeOrStart() {
    for (Worker w; (w = idle.pollFirst()) != null; ) {
      if (w.wake()) {
        return;
      }
    }
    if (live.get() < base) {
      start(base);
    }
  }

  /** Starts a thread if the pool has fewer than {@code limit} (and the cap allows). */
  private boolean start(int limit) {
    int n;
    do {
      n = live.get();
      if (n < 0 || n >= Math.min(limit, MAX_THREADS) || state >= STOP) { // n < 0: terminated
        return false;
      }
    } while (!live.compareAndSet(n, n + 1));
    Worker w = null;
    try {
      w = new Worker();
      workers.add(w);
      w.thread.start();
    } catch (Throwable e) { // out of native threads: the calls wait for the threads there are
      if (w != null) {
        workers.remove(w);
      }
      live.decrementAndGet();
      startFailed = e;
      tryTerminate();
      return false;
    }
    if (!watching.get() && watching.compareAndSet(false, true)) {
      try {
        watchdog.start(); // with the first thread: a pool never used holds no thread
      } catch (Throwable e) { // no thread to be had: the next start tries again
        watching.set(false);
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ watchdog

  private void watch() {
    int quiet = 0;
    boolean reported = false;
    while (state != TERMINATED) {
      Thread.interrupted(); // a stray interrupt would turn the park into a spin
      LockSupport.parkNanos(
          this, quiet < QUIET_SAMPLES ? sampleNanos : Math.max(sampleNanos, QUIET_SAMPLE_NANOS));
      if (queued.get() <= 0) {
        quiet++;
        continue;
      }
      quiet = 0;
      try {
        sample();
      } catch (Throwable t) { // the pool must not lose its watchdog: report once, go on
        if (!reported) {
          reported = true;
          try {
            report(t);
          } catch (Throwable ignored) { // a handler that throws: nothing more to tell
          }
        }
      }
    }
  }

  /** Calls are queued: wake an idle thread if there is one, else add threads for blocked ones. */
  private void sample() {
    if (!idle.isEmpty()) {
      wakeOrStart();
      return;
    }
    int n = live.get();
    if (n >= MAX_THREADS) {
      return;
    }
    int blocked = 0;
    for (Worker w : workers) {
      if (w.blocked()) {
        blocked++;
      }
    }
    int unblocked = n - blocked;
    if (unblocked < base && System.nanoTime() - startFailedAt > START_RETRY_NANOS) {
      int more = Math.min(Math.max(base - unblocked, n / 2), queued.get());
      for (int i = 0; i < more && start(n + more); i++) {}
      Throwable failed = startFailed;
      if (failed != null) { // the system gives no more threads: say so once, try again later
        startFailed = null;
        startFailedAt = System.nanoTime();
        if (!startFailureReported) {
          startFailureReported = true;
          report(
              new IllegalStateException(
                  name + " could not start a thread for blocked handlers (" + n + " running)",
                  failed));
        }
      }
    }
  }

  /** To the calling thread's uncaught-exception handler, as a thread that dies would. */
  private static void report(Throwable t) {
    Thread current = Thread.currentThread();
    current.getUncaughtExceptionHandler().uncaughtException(current, t);
  }

  // ------------------------------------------------------------------ lifecycle

  @Override
  public void shutdown() {
    synchronized (lifecycle) {
      if (state == RUNNING) {
        state = SHUTDOWN;
      }
    }
    wakeAll();
    tryTerminate();
  }

  @Override
  public List<Runnable> shutdownNow() {
    synchronized (lifecycle) {
      if (state < STOP) {
        state = STOP;
      }
    }
    List<Runnable> drained = new ArrayList<>();
    for (Runnable r; (r = queue.poll()) != null; ) {
      queued.decrementAndGet();
      drained.add(r);
    }
    for (Worker w : workers) {
      w.thread.interrupt();
    }
    wakeAll();
    tryTerminate();
    return drained;
  }

  private void wakeAll() {
    for (Worker w; (w = idle.pollFirst()) != null; ) {
      w.wake();
    }
  }

  private void tryTerminate() {
    if (state == RUNNING || live.get() != 0 || (state == SHUTDOWN && queued.get() > 0)) {
      return;
    }
    synchronized (lifecycle) {
      // The count goes from none to CLOSED, so a start racing this (the watchdog's, for calls it
      // saw queued) either counted first, and its thread ends the pool when it leaves, or fails.
      if (state == TERMINATED || !live.compareAndSet(0, CLOSED)) {
        return;
      }
      state = TERMINATED;
    }
    terminated.countDown();
    if (watching.get()) {
      LockSupport.unpark(watchdog);
    }
  }

  @Override
  public boolean isShutdown() {
    return state != RUNNING;
  }

  @Override
  public boolean isTerminated() {
    return state == TERMINATED;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }

  /** Threads started and not yet ended. */
  int poolSize() {
    return Math.max(0, live.get());
  }

  @Override
  public String toString() {
    return "HandlerPool[" + name + ", threads " + poolSize() + ", base " + base + "]";
  }

  // ------------------------------------------------------------------ threads

  private static final int BUSY = 0;
  private static final int IDLE = 1;
  private static final int WOKEN = 2;

  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  private static final VarHandle SEQUENCE;

  static {
    try {
      SEQUENCE = MethodHandles.lookup().findVarHandle(Worker.class, "sequence", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final class Worker implements Runnable {
    final Thread thread;
    private final AtomicInteger status = new AtomicInteger(BUSY);

    /**
     * Odd while in a call, even between calls. Written only by this worker, with release stores (a
     * plain move on x86: no fence per call); the watchdog reads it opaquely, and needs only to see
     * it move, never to order other memory by it.
     */
    @SuppressWarnings("unused") // through SEQUENCE
    private long sequence;

    /** The watchdog's own: {@link #sequence} at the last sample, and how many samples it held. */
    private long seen = -1;

    private int stuck;

    /** Watchdog thread only: CPU time at the last sample, and samples in a row it stood still. */
    private long lastCpu = -1;

    private int stuckStill;

    /** Samples in a row at which the kernel had this thread asleep in the same call. */
    private int asleep;

    /**
     * The thread's id in the kernel (Linux), or -1; written by the thread itself when it starts.
     */
    private volatile int kernelId = -1;

    private boolean retired;

    Worker() {
      thread = new Thread(null, this, name + "-" + names.incrementAndGet(), 0, false);
      thread.setDaemon(true);
      thread.setContextClassLoader(loader);
    }

    @Override
    public void run() {
      try {
        kernelId = KernelThreads.currentId();
        while (true) {
          if (state >= STOP) {
            return;
          }
          Runnable call = queue.poll();
          if (call == null) {
            if (spin()) {
              continue;
            }
            if (state != RUNNING || !awaitCall()) {
              return;
            }
            continue;
          }
          if (queued.decrementAndGet() > 0 && (!idle.isEmpty() || live.get() < base)) {
            wakeOrStart(); // more queued: one more thread takes them while this one runs its call
          }
          runCall(call);
        }
      } finally {
        workers.remove(this);
        if (!retired) {
          live.decrementAndGet();
        }
        // A caller that saw this thread live woke nobody; if it was the last, a call it queued
        // meanwhile needs a thread (pairs with the caller's look at live after its offer).
        if (state < STOP && live.get() == 0 && queue.peek() != null) {
          start(1);
        }
        tryTerminate();
      }
    }

    /**
     * Yields a few times, watching for a call, if no more than {@link #SPINNERS} other threads do:
     * with many threads each yield hands the core to every other spinning one in turn, and 250
     * threads yielding starved the event loop (a 1 ms blocking handler with 1,000 clients served
     * 4,400 calls/s instead of 24,000).
     */
    private boolean spin() {
      if (spinners.getAndIncrement() >= SPINNERS) {
        spinners.decrementAndGet();
        return false;
      }
      try {
        for (int i = 0; i < SPINS; i++) {
          if (queue.peek() != null) {
            return true;
          }
          Thread.yield();
        }
        return false;
      } finally {
        // Then awaitCall looks at the queue again: the call of a caller that saw this thread
        // spinning (so woke nobody) was offered before that look.
        spinners.decrementAndGet();
      }
    }

    private void runCall(Runnable call) {
      long s = (long) SEQUENCE.get(this);
      SEQUENCE.setRelease(this, s + 1);
      try {
        call.run();
      } catch (Throwable t) {
        report(t);
      } finally {
        Thread.interrupted(); // the next call starts without this one's interrupt
        SEQUENCE.setRelease(this, s + 2);
      }
    }

    /**
     * Waits for a call. False when the thread should end: it was idle for the keep-alive and the
     * pool has more than {@code base} threads.
     */
    private boolean awaitCall() {
      status.set(IDLE);
      idle.offerFirst(this);
      long deadline = System.nanoTime() + keepAliveNanos;
      while (true) {
        if (status.get() == WOKEN) {
          status.set(BUSY);
          return true;
        }
        boolean timedOut = deadline - System.nanoTime() <= 0;
        boolean work = queue.peek() != null;
        if (!work && queued.get() > 0) {
          // A call counted but not yet offered: its caller may have decided to wake nobody.
          // Either this look sees the offer, or that caller sees the flag after its offer.
          owed.set(true);
          work = queue.peek() != null;
        }
        if (work || state != RUNNING || timedOut) {
          if (status.compareAndSet(IDLE, BUSY)) {
            idle.remove(this); // nobody woke this thread: it leaves the stack itself
          }
          status.set(BUSY);
          return !timedOut || queue.peek() != null || !retire();
        }
        Thread.interrupted(); // a stray interrupt would turn the park into a spin
        LockSupport.parkNanos(HandlerPool.this, deadline - System.nanoTime());
      }
    }

    /** Leaves the pool if it has more than {@code base} threads. */
    private boolean retire() {
      for (int n; (n = live.get()) > base; ) {
        if (live.compareAndSet(n, n - 1)) {
          if (queue.peek() != null) { // a call came as this thread left: it stays for it
            live.incrementAndGet();
            return false;
          }
          retired = true;
          return true;
        }
      }
      return false;
    }

    /** True if this thread was idle and is now woken by the caller. */
    boolean wake() {
      if (status.compareAndSet(IDLE, WOKEN)) {
        LockSupport.unpark(thread);
        return true;
      }
      return false;
    }

    /**
     * Where the kernel does not say where threads sleep: blocked if in the same call for {@link
     * #STUCK_SAMPLES_UNSEEN} samples and not computing (its CPU time stood still since the last
     * sample, where the JVM measures it). A thread waiting for a core also stands still, hence the
     * many samples.
     */
    private boolean unseenBlocked() {
      long cpu = CPU.isThreadCpuTimeSupported() ? CPU.getThreadCpuTime(thread.getId()) : -1;
      boolean computing = cpu > 0 && cpu != lastCpu;
      lastCpu = cpu;
      if (computing) {
        stuckStill = 0;
        return false;
      }
      return ++stuckStill >= STUCK_SAMPLES_UNSEEN;
    }

    /**
     * Watchdog thread only. True if this thread is in a call and blocked in it: waiting in Java
     * (its state says so), or, RUNNABLE to Java, asleep in the kernel on something other than a
     * futex at two samples in a row in the same call (a blocking read). A futex is where the JVM's
     * own waits sleep (a collection's safepoint, the heap lock), which more threads would only
     * join. A thread that waits for a core is not asleep: another thread would wait for the same
     * core.
     */
    boolean blocked() {
      long c = (long) SEQUENCE.getOpaque(this);
      if ((c & 1) == 0) { // between calls
        seen = c;
        return false;
      }
      Thread.State s = thread.getState();
      if ((long) SEQUENCE.getOpaque(this) != c) {
        return false; // the call ended while its state was read: the state may be the idle park
      }
      boolean sameCall = c == seen;
      if (sameCall) {
        stuck++;
      } else {
        seen = c;
        stuck = 0;
        asleep = 0;
        stuckStill = 0;
      }
      if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
        return true; // a sleep, a park, a future's get: more threads run more such calls
      }
      if (s == Thread.State.BLOCKED) {
        return sameCall; // a contended monitor: more threads only queue on it, unless it lasts
      }
      if (!sameCall) {
        return false;
      }
      int tid = kernelId;
      if (tid <= 0 || !KernelThreads.AVAILABLE) {
        return unseenBlocked();
      }
      if (asleep >= 2 && stuck % RECHECK_SAMPLES != 0) {
        return true; // the verdict of a few samples ago stands: one file read per thread saved
      }
      asleep = KernelThreads.asleepOutsideFutex(tid) ? asleep + 1 : 0;
      return asleep >= 2;
    }
  }
}
