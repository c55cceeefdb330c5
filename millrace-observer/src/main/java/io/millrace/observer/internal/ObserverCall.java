package io.millrace.observer.internal;

import io.millrace.core.StreamErrorException;
import io.millrace.core.internal.Failures;
import io.millrace.frame.ErrorCode;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.NoopSubscription;
import io.millrace.streams.internal.RequesterChannel;
import io.millrace.streams.internal.SizeWindow;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.lang.System.Logger.Level;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One call seen through observers: the values this side sends (the observer the application calls,
 * turned into a Publisher the engine's sink requests from) and the values it receives (a Subscriber
 * that passes them to the application's observer: a requester reading automatically asks for all of
 * them at once, a responder or a manual reader grants credit as they are delivered).
 *
 * <p>Sending is bounded: values wait here only up to {@code bound} beyond the sink's demand (the
 * prefetch, and at most about a mebibyte of values by the sampled average size of those sent); past
 * that a caller that may wait does (parked, so a virtual thread unmounts, and woken as the values
 * go out, never by polling), and a caller on any Netty event loop, which must not, fails the call.
 * An interrupted wait fails it too. A failed or cancelled call counts as cancelled: {@code
 * isCancelled()} says so, later values are released, and a responder's {@code onNext} throws unless
 * an on-cancel handler was set (gRPC's rule), and its request observer, unless the requests ended,
 * gets {@code onError}. A requester's {@code onNext} then drops values quietly and {@code
 * isReady()} stays false: the responder stopped reading (it may still answer) or the call ended,
 * which the response observer hears.
 */
public final class ObserverCall<S, R>
    implements ServerCallStreamObserver<S>, ClientCallStreamObserver<S> {
  private static final System.Logger LOG = System.getLogger(ObserverCall.class.getName());

  /**
   * What a call's values need beyond delivery: how a value this side will not send or deliver is
   * let go, and the errors a cancelled or overrun call ends with.
   */
  public interface Rules {
    /** Lets go of a value that will not be sent or delivered. */
    void release(Object value);

    /** The call was cancelled: for onNext after it, and for the observer of a cancelled call. */
    RuntimeException cancelled(String message);

    /** A producer on an event loop sent past the bound, which fails the call. */
    RuntimeException overrun(String message);

    /** The handler could not be started (its executor refused it): the call fails with this. */
    default RuntimeException rejected(String message) {
      return overrun(message);
    }

    /** A value's size in bytes, to bound what waits by size; negative when it is not known. */
    default long length(Object value) {
      return -1;
    }
  }

  /** Payloads: released, and the ends are RSocket's CANCELED and APPLICATION_ERROR. */
  public static final Rules PAYLOADS =
      new Rules() {
        @Override
        public void release(Object value) {
          ((Payload) value).release();
        }

        @Override
        public RuntimeException cancelled(String message) {
          return StreamErrorException.received(ErrorCode.CANCELED, message);
        }

        @Override
        public RuntimeException overrun(String message) {
          return new StreamErrorException(ErrorCode.APPLICATION_ERROR, message);
        }

        @Override
        public RuntimeException rejected(String message) {
          return new StreamErrorException(ErrorCode.REJECTED, message);
        }

        @Override
        public long length(Object value) {
          return ((Payload) value).length();
        }
      };

  private final EventExecutor loop;
  private final Rules rules;
  private final boolean sends;
  private final boolean requester;

  /**
   * How many values may wait: the prefetch, fewer for large values ({@link #sampleSize}). Written
   * by the producer (onNext is serial); read by it, and on the loop to withhold a responder's
   * credit ({@link #grantUnlessBackedUp}).
   */
  private volatile int bound;

  /** Values the producer has given, to sample their sizes ({@link SizeWindow#samples}). */
  private long given;

  private long averageSize; // framing included; 0 until sampled
  private final int prefetch;
  private final int limit;

  // ------------------------------------------------------------------ sending
  // Counters are field updaters, and the queue is made on first need: a request-response
  // answered at once makes none of them (objects fewer per call).
  private volatile Queue<S> queue;
  private volatile int queued;
  private volatile long demand;
  private volatile int wip;
  private volatile int cancelOnce;

  /** The producer waiting in {@link #awaitSpace}, if any (onNext is serial: one at most). */
  private volatile Thread waiter;

  private volatile Subscriber<? super S> sink;
  private volatile boolean completed;
  private volatile Throwable error;
  private volatile Throwable failure;
  private volatile boolean cancelled;
  private volatile Runnable onReady;
  private volatile Runnable onCancel;
  private boolean terminated; // inside the drain only
  private boolean started; // loop only: the handler returned (on-ready may run)
  private boolean inOnReady; // loop only
  private boolean readyAgain; // loop only

  // ------------------------------------------------------------------ receiving
  private volatile StreamObserver<R> target;
  private volatile Subscription inbound;
  private volatile boolean manual;
  private volatile boolean flowControlFixed; // a requester's, once beforeStart returned
  private volatile boolean cancelRequested;
  private volatile long pendingRequests;
  private volatile long owedCredit;
  private boolean targetDone; // loop only
  private R opening; // loop only: a responder channel's first value, until its requests subscribe

  /**
   * A responder channel's completion waits until its requests are subscribed ({@link
   * #holdEndUntilReceiving}): sent before, it would let the streams layer take them for unread and
   * cancel them, where RSocket's half-close lets the requester go on sending.
   */
  private volatile boolean endHeld;

  private int delivered; // loop only

  /** 1 while credit for delivered values is withheld ({@link #grantUnlessBackedUp}). */
  private volatile int withheld;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> WITHHELD =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "withheld");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<ObserverCall, Queue> QUEUE =
      AtomicReferenceFieldUpdater.newUpdater(ObserverCall.class, Queue.class, "queue");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<ObserverCall, Subscriber> SINK =
      AtomicReferenceFieldUpdater.newUpdater(ObserverCall.class, Subscriber.class, "sink");

  /** 1 once a sink subscribed to what this side sends: one may. */
  @SuppressWarnings("unused") // through SUBSCRIBED
  private volatile int subscribed;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> SUBSCRIBED =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "subscribed");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> QUEUED =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "queued");

  @SuppressWarnings("rawtypes")
  private static final AtomicLongFieldUpdater<ObserverCall> DEMAND =
      AtomicLongFieldUpdater.newUpdater(ObserverCall.class, "demand");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> WIP =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "wip");

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> CANCEL_ONCE =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "cancelOnce");

  /** Whether the on-cancel handler has run (or been claimed to run): once per call. */
  @SuppressWarnings("unused") // through ON_CANCEL_RAN
  private volatile int onCancelRan;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ObserverCall> ON_CANCEL_RAN =
      AtomicIntegerFieldUpdater.newUpdater(ObserverCall.class, "onCancelRan");

  @SuppressWarnings("rawtypes")
  private static final AtomicLongFieldUpdater<ObserverCall> PENDING_REQUESTS =
      AtomicLongFieldUpdater.newUpdater(ObserverCall.class, "pendingRequests");

  @SuppressWarnings("rawtypes")
  private static final AtomicLongFieldUpdater<ObserverCall> OWED_CREDIT =
      AtomicLongFieldUpdater.newUpdater(ObserverCall.class, "owedCredit");

  /**
   * {@code sends}: whether this side sends values on the call (a channel, or a responder); {@code
   * requester}: the requester's side, where on-ready may run from the first demand on, or the
   * responder's, where it runs only once {@link #started()} says the handler returned.
   */
  public ObserverCall(
      EventExecutor loop, Rules rules, int prefetch, boolean sends, boolean requester) {
    this.loop = loop;
    this.rules = rules;
    this.sends = sends;
    this.started = requester;
    this.requester = requester;
    this.bound = prefetch;
    this.prefetch = prefetch;
    this.limit = Math.max(1, prefetch - (prefetch >> 2));
  }

  /** Whether the calling thread runs a Netty event loop (any: waiting there stalls its sockets). */
  static boolean onAnEventLoop() {
    return ThreadExecutorMap.currentExecutor() != null;
  }

  // ================================================================== sending: the engine's side

  /** What the application sends, for the engine's sink (one subscriber). */
  public Publisher<S> outbound() {
    return this::subscribeOutbound;
  }

  /**
   * The call's values for the engine's sink, {@code invoke} (the handler) run once the sink is
   * attached: a handler that sends more than the bound before returning (on an executor) then waits
   * for the peer instead of for a sink that would only come after it returned. What the handler
   * throws fails the call after what it sent; once it returns, its on-ready handler may run.
   */
  public Publisher<S> serving(Runnable invoke) {
    return sink -> {
      if (subscribeOutbound(sink)) {
        invoke(invoke);
      }
    };
  }

  /**
   * As {@link #serving(Runnable)}, but a handler subscribed on an event loop runs on {@code
   * offload}: there it may call {@code onNext} in a loop and be held back by the peer's credit,
   * which it cannot be on the loop (the credit comes on the loop it would occupy). If {@code
   * offload} refuses it, the call fails ({@link Rules#rejected}) and {@code refused} lets go of
   * what the handler would have taken.
   */
  public Publisher<S> serving(Runnable invoke, Executor offload, Runnable refused) {
    return sink -> {
      if (!subscribeOutbound(sink)) {
        return;
      }
      if (!onAnEventLoop()) {
        invoke(invoke);
        return;
      }
      try {
        offload.execute(
            () -> {
              if (cancelled) { // while it waited for a thread: nobody wants its answer
                refused.run();
                return;
              }
              try {
                invoke(invoke);
              } catch (Throwable t) { // an Error: the call fails with it, not left open
                onError(t);
                releaseHeldEnd();
                if (t instanceof VirtualMachineError) {
                  throw t;
                }
              }
            });
      } catch (RejectedExecutionException e) {
        StreamHandlers.refused(e);
        try {
          refused.run();
        } finally {
          fail(rules.rejected("the server cannot run the handler now"));
        }
      }
    };
  }

  /** Runs the handler: what it throws fails the call after what it sent; then it has started. */
  private void invoke(Runnable invoke) {
    try {
      invoke.run();
    } catch (RuntimeException e) {
      onError(e); // after what it sent, through the same ordered path
      releaseHeldEnd(); // no requests will be read: a completion it sent first goes out now
      return;
    }
    started();
  }

  /**
   * Attaches the sink; false (the subscriber told so) for a second one: a call's values go to one
   * sink, and its handler runs once.
   */
  private boolean subscribeOutbound(Subscriber<? super S> s) {
    if (s == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      s.onSubscribe(NoopSubscription.INSTANCE);
      s.onError(new IllegalStateException("a call's values go to one subscriber"));
      return false;
    }
    s.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {
            if (n <= 0) {
              fail(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
              return;
            }
            long r;
            long next;
            do {
              r = demand;
              next = r + n < 0 ? Long.MAX_VALUE : r + n;
            } while (!DEMAND.compareAndSet(ObserverCall.this, r, next));
            drain();
            // The on-ready handler runs on the loop: a sink that asks from another thread (the
            // gRPC bridge's, on gRPC's threads) must not run it there, beside the loop's callbacks.
            if (loop.inEventLoop()) {
              ready();
            } else {
              runOnLoop(ObserverCall.this::ready);
            }
          }

          @Override
          public void cancel() {
            cancelled(null);
          }
        });
    sink = s; // after onSubscribe returned: nothing is signalled before (rule 1.3)
    drain();
    return true;
  }

  /**
   * The handler has returned: as in gRPC, its on-ready handler may run from now on, and runs once
   * now if the call is ready (the credit may have come first). On the loop.
   */
  public void started() {
    if (loop.inEventLoop()) {
      startedOnLoop();
    } else {
      try {
        loop.execute(this::startedOnLoop);
      } catch (RejectedExecutionException e) {
        // The connection is gone; the call ends with it.
      }
    }
  }

  private void startedOnLoop() {
    started = true;
    ready();
  }

  /** Runs the on-ready handler when the call can send; not reentrant. On the loop. */
  private void ready() {
    Runnable handler = onReady;
    if (handler == null || !started || !isReady()) {
      return;
    }
    if (inOnReady) {
      readyAgain = true;
      return;
    }
    inOnReady = true;
    try {
      do {
        readyAgain = false;
        handler.run();
      } while (readyAgain && isReady());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "on-ready handler threw", e);
      fail(e);
    } finally {
      inOnReady = false;
    }
  }

  /**
   * The call ends for this side's sending: the peer cancelled, the stream failed or the connection
   * went ({@code why} null), or this side failed it. Once, whoever comes first.
   */
  private void cancelled(Throwable why) {
    if (!CANCEL_ONCE.compareAndSet(this, 0, 1)) {
      return;
    }
    if (why != null) {
      failure = why;
    }
    cancelled = true;
    wakeWaiter(); // (a producer about to wait sees "cancelled" after it is seen here)
    drain(); // releases what waits; sends the failure, if any
    runOnCancel();
    if (!requester) {
      // As in gRPC: a responder's request observer that has not seen the requests end hears
      // that the call was cancelled, so that it can let go of what it holds.
      runOnLoop(this::tellReceiverCancelled);
    }
  }

  /** The request observer, if any and not ended, gets onError(cancelled). On the loop. */
  private void tellReceiverCancelled() {
    StreamObserver<R> t = target;
    if (t == null || targetDone) {
      return;
    }
    targetDone = true;
    tellError(t, rules.cancelled("the call was cancelled"));
  }

  private void fail(Throwable t) {
    LOG.log(Level.DEBUG, "call failed: " + t);
    cancelled(t);
  }

  private void drain() {
    if (WIP.getAndIncrement(this) != 0) {
      return;
    }
    drainLoop();
  }

  /** The drain's body, entered holding one count of {@link #wip}. */
  private void drainLoop() {
    int missed = 1;
    do {
      Subscriber<? super S> s = sink;
      if (terminated) {
        releaseQueued();
      } else if (cancelled) {
        releaseQueued();
        Throwable f = failure;
        if (f != null && s != null) {
          terminated = true;
          s.onError(f); // this side failed the call: the peer hears why
        }
        if (s != null && (f == null || terminated)) {
          SINK.compareAndSet(this, s, null); // rule 3.13: a cancelled call lets go of its sink
        }
      } else if (s != null) {
        boolean emitted = false;
        Queue<S> q = queue;
        while (q != null && demand > 0) {
          S p = q.poll();
          if (p == null) {
            break;
          }
          QUEUED.decrementAndGet(this);
          DEMAND.decrementAndGet(this);
          emitted = true;
          s.onNext(p);
        }
        if (emitted) {
          wakeWaiter();
          releaseWithheld();
        }
        if (queueEmpty() && (completed && !endHeld || error != null)) {
          terminated = true;
          SINK.compareAndSet(this, s, null);
          Throwable e = error;
          if (e != null) {
            s.onError(e);
          } else {
            s.onComplete();
          }
        }
      }
      missed = WIP.addAndGet(this, -missed);
    } while (missed != 0);
  }

  private void releaseQueued() {
    Queue<S> q = queue;
    if (q == null) {
      return;
    }
    for (S p; (p = q.poll()) != null; ) {
      QUEUED.decrementAndGet(this);
      rules.release(p);
    }
  }

  private boolean queueEmpty() {
    Queue<S> q = queue;
    return q == null || q.isEmpty();
  }

  /** Queues {@code value} (the queue is made on first need) and counts it. */
  @SuppressWarnings("unchecked")
  private void enqueue(S value) {
    Queue<S> q = queue;
    if (q == null) {
      q = new ConcurrentLinkedQueue<>();
      if (!QUEUE.compareAndSet(this, null, q)) {
        q = queue;
      }
    }
    q.offer(value);
    QUEUED.incrementAndGet(this);
  }

  /**
   * Wakes the producer waiting for space, if any. Any thread; no lock, so the event loop never
   * waits for a producer. No wake-up is lost: the producer publishes itself in {@link #waiter}
   * before it reads {@code queued} and {@code cancelled}, and whoever changes those reads {@link
   * #waiter} after (volatile on both sides); an unpark that comes before the park ends it at once.
   */
  private void wakeWaiter() {
    Thread t = waiter;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  private void runOnLoop(Runnable task) {
    runOnLoop(loop, task);
  }

  /** Runs {@code task} on {@code loop}: now when on it, else queued (now if the loop is gone). */
  public static void runOnLoop(EventExecutor loop, Runnable task) {
    if (loop.inEventLoop()) {
      task.run();
    } else {
      try {
        loop.execute(task);
      } catch (RejectedExecutionException e) {
        task.run(); // the loop is gone: nothing else runs on it
      }
    }
  }

  /** Runs an application's {@code handler} on {@code loop}; what it throws is logged. */
  public static void runHandler(EventExecutor loop, Runnable handler, String what) {
    runOnLoop(
        loop,
        () -> {
          try {
            handler.run();
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, what + " threw", e);
          }
        });
  }

  // ================================================================== sending: the application's

  @Override
  public void onNext(S value) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    if (!sends || completed || error != null) {
      rules.release(value);
      throw new IllegalStateException(
          sends
              ? "onNext after onCompleted or onError"
              : "this call sends nothing after its request");
    }
    if (cancelled) {
      rules.release(value);
      if (onCancel == null && !requester) {
        throw rules.cancelled("the call was cancelled");
      }
      return; // the on-cancel handler tells the application
    }
    if (SizeWindow.samples(given)) {
      sampleSize(value);
    }
    given++;
    if (WIP.compareAndSet(this, 0, 1)) {
      Subscriber<? super S> s = sink;
      if (s != null && !terminated && queueEmpty() && demand > 0) {
        // Nothing waits and the sink wants it: straight through, no queue node.
        DEMAND.decrementAndGet(this);
        s.onNext(value);
      } else {
        enqueue(value);
      }
      drainLoop(); // what came meanwhile, the end, a cancel
    } else {
      enqueue(value);
      drain();
    }
    if (queued > bound && (!onAnEventLoop() || queued > loopBound())) {
      // A producer on a loop cannot wait: it fails only past what may wait for it (loopBound).
      if (onAnEventLoop()) {
        fail(
            rules.overrun(
                "sent faster than the peer reads, on an event loop: follow isReady() and the"
                    + " on-ready handler, or give the responder a handler executor"));
      } else {
        awaitSpace();
      }
    }
  }

  /**
   * How many values a producer on an event loop may leave waiting before its call fails: about
   * {@link #LOOP_QUEUE_BYTES} of them by their sampled size plus {@link #VALUE_OVERHEAD} each, and
   * never fewer than the prefetch (all of it when sizes are not known). Such a producer cannot be
   * held back, since the peer's credit comes on the loop it occupies; this lets the common handler
   * that sends a few thousand small values in a loop, as grpc-java code does, finish (the values go
   * out as the peer reads), while one that floods still fails at a bound in bytes, not at a count
   * that a 16-byte and a 1 MiB value would share.
   */
  private long loopBound() {
    long average = averageSize;
    return average <= 0
        ? prefetch
        : Math.max(prefetch, LOOP_QUEUE_BYTES / (average + VALUE_OVERHEAD));
  }

  /** What values a producer on an event loop leaves waiting may hold: {@link #loopBound}. */
  static final long LOOP_QUEUE_BYTES = 1 << 20;

  /** What a waiting value costs beyond its bytes: its objects and its queue node, about. */
  static final long VALUE_OVERHEAD = 128;

  /**
   * Counts a value's size into the running average and sets the bound to about a mebibyte of such
   * values (at least two, at most the prefetch), so that a producer of large values held back by a
   * slow reader leaves a few waiting, not the prefetch's count. The first sixteen values are
   * sampled, then one in sixteen; the average rises to a larger value at once and falls slowly. A
   * producer on an event loop, which cannot wait, fails only past {@link #loopBound}.
   */
  private void sampleSize(S value) {
    long size;
    try {
      size = rules.length(value);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      return; // a size that cannot be had here: the bound stays (sending fails as it did)
    }
    if (size < 0) {
      return;
    }
    averageSize = SizeWindow.sampled(averageSize, size);
    int was = bound;
    bound = (int) Math.min(prefetch, SizeWindow.count(averageSize));
    if (bound > was) {
      releaseWithheld(); // more may wait now: credit withheld at the old bound may go
    }
  }

  /**
   * Waits, parked, until the peer has taken enough that at most {@code bound} values wait: woken by
   * the loop as it sends them ({@link #wakeWaiter}), by a cancel, or by an interrupt.
   */
  private void awaitSpace() {
    boolean interrupted = false;
    boolean loopGone = false;
    waiter = Thread.currentThread();
    try {
      while (queued > bound && !cancelled) {
        if (loop.isTerminated()) {
          loopGone = true; // the connection is gone with it and nothing will take what waits
          break;
        }
        // Timed only to notice a loop that terminated without a word (a closing connection
        // cancels the call, which wakes this), or a second producer that broke the serial rule
        // and took the wake-up: not a polling interval.
        LockSupport.parkNanos(this, LOOP_CHECK_NANOS);
        if (Thread.interrupted()) {
          interrupted = true;
          break;
        }
      }
    } finally {
      waiter = null;
    }
    if (loopGone) {
      // The response observer heard of it from the loop's end; what waits is dropped, and what
      // is sent from now on too (a call started once the loop was gone never opened).
      cancelled(null);
      return;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
      fail(rules.cancelled("interrupted while waiting to send"));
    }
  }

  /** How often a parked producer looks whether the event loop has terminated. */
  private static final long LOOP_CHECK_NANOS =
      java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable");
    }
    if (completed || error != null) {
      return;
    }
    error = t;
    drain();
  }

  @Override
  public void onCompleted() {
    if (completed || error != null) {
      return;
    }
    completed = true;
    drain();
  }

  @Override
  public boolean isReady() {
    // Values already waiting use up demand that has not reached them yet.
    return demand > queued && !cancelled && !completed && error == null;
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
    this.onReady = onReadyHandler;
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  /**
   * Sets the on-cancel handler. A call cancelled before this (a handler on an executor that sets it
   * after a slow first step) runs it now, on the loop, as gRPC runs a handler set at any time
   * before the service method returns; {@code onNext} then drops values without throwing, as it
   * does once a handler is set.
   */
  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
    if (cancelled) { // read after the handler is published: cancelled() reads them the other way
      runOnCancel();
    }
  }

  /** Runs the on-cancel handler on the loop if one is set, once per call. */
  private void runOnCancel() {
    Runnable handler = onCancel;
    if (handler != null && ON_CANCEL_RAN.compareAndSet(this, 0, 1)) {
      runHandler(loop, handler, "on-cancel handler");
    }
  }

  // ================================================================== receiving

  /**
   * The observer the received values go to; may be set after the call starts (a responder's channel
   * observer comes from the handler), but before the first value.
   */
  public void receiveWith(StreamObserver<R> observer) {
    this.target = observer;
    if (cancelled && !requester) {
      // Cancelled before the handler gave its observer (a call that ended before its answer was
      // subscribed, whose handler runs all the same): cancelled() found no observer to tell.
      runOnLoop(this::tellReceiverCancelled);
    }
  }

  /**
   * A responder channel's received values: the opening value {@code first}, then those of {@code
   * rest}, all on the loop. {@code rest} is subscribed in one loop task, and {@code first} given as
   * it is (in the subscription's {@code onSubscribe}, before any credit is asked): a handler on an
   * executor must not subscribe {@code rest} itself, for the requester's COMPLETE may be read, and
   * delivered, before a task giving {@code first} runs; and a responder that answers and completes
   * on the first value must find its requests already subscribed, or the streams layer takes them
   * for unread and cancels them (RSocket's half-close: the requester may go on sending). When the
   * call was cancelled before {@code first} could be given, it is released and the observer told of
   * the cancel.
   */
  public void receive(R first, Publisher<R> rest) {
    runOnLoop(
        () -> {
          opening = first;
          rest.subscribe(inbound());
          R f = opening; // a Publisher that did not call onSubscribe at once: give it now
          if (f != null) {
            opening = null;
            giveOpening(f);
          }
        });
  }

  /**
   * For a responder's channel, before its handler runs: an {@code onCompleted} that comes before
   * the requests are subscribed (in the handler itself, before it returns its request observer) is
   * sent only once they are, so that the requester's half stays open.
   */
  public void holdEndUntilReceiving() {
    endHeld = true;
  }

  /** Gives a responder channel's opening value to the request observer. Loop. */
  private void giveOpening(R first) {
    if (targetDone || cancelled) {
      rules.release(first);
      tellReceiverCancelled(); // (once: it marks the observer done)
      return;
    }
    try {
      target.onNext(first);
    } catch (RuntimeException e) {
      observerFailed(e);
    }
  }

  /** The requests are subscribed: a completion held back may go now. */
  private void releaseHeldEnd() {
    if (endHeld) {
      endHeld = false;
      drain();
    }
  }

  /**
   * A responder's received values, from {@code requests} subscribed on the loop: the request
   * observer hears them there, never on the thread that ran the handler (a Publisher may emit its
   * first value as it is asked, on the asking thread).
   */
  public void receive(Publisher<R> requests) {
    runOnLoop(() -> requests.subscribe(inbound()));
  }

  /** The Subscriber the engine's received values come through. */
  public Subscriber<R> inbound() {
    return new Subscriber<>() {
      @Override
      public void onSubscribe(Subscription s) {
        if (s == null) {
          throw new NullPointerException("subscription"); // rule 2.13
        }
        if (inbound != null) {
          s.cancel(); // rule 2.5: one subscription
          return;
        }
        inbound = s;
        R first = opening;
        if (first != null) {
          opening = null;
          giveOpening(first);
          if (targetDone) {
            s.cancel(); // the observer failed or the call was cancelled: nothing more to read
            releaseHeldEnd();
            return;
          }
        }
        releaseHeldEnd();
        if (cancelRequested) {
          s.cancel(); // cancelled before it started: it never does
          return;
        }
        long pending = PENDING_REQUESTS.getAndSet(ObserverCall.this, -1);
        if (!manual) {
          // Values go to the observer as they arrive, on the loop, so nothing queues here. A
          // requester asks for all of them, as a plain subscribe() does in the reactive flavours:
          // unbounded credit, no REQUEST_N after the first, the transport holding the peer back.
          // The window this had (the prefetch here plus the prefetch the streams layer grants
          // ahead) held small messages to a REQUEST_N round trip per 192: half the rate. A
          // responder keeps the window for its request observer, so that a caller's isReady()
          // stays tied to the handler's reading.
          s.request(requester ? Long.MAX_VALUE : prefetch);
        } else if (sends && requester) {
          // A channel opens with its first credit: one, taken from what request(n) asks later. (A
          // responder's channel opened with the requester's first value: it owes no credit.)
          owedCredit = Math.max(0, 1 - Math.max(0, pending));
          s.request(Math.max(1, pending));
        } else if (pending > 0) {
          s.request(pending);
        }
      }

      @Override
      public void onNext(R p) {
        if (p == null) {
          throw new NullPointerException("value"); // rule 2.13
        }
        if (targetDone) {
          rules.release(p);
          return;
        }
        if (cancelled && !requester) {
          rules.release(p); // a responder's observer of a cancelled call hears onError instead,
          tellReceiverCancelled(); // now: the task cancelled() queued may come after the end
          return;
        }
        try {
          target.onNext(p);
        } catch (RuntimeException e) {
          observerFailed(e);
          return;
        }
        if (!manual && !requester && ++delivered >= limit) {
          grantUnlessBackedUp();
        }
      }

      @Override
      public void onError(Throwable t) {
        if (t == null) {
          throw new NullPointerException("throwable"); // rule 2.13
        }
        if (!targetDone) {
          targetDone = true;
          tellError(target, t);
        }
      }

      @Override
      public void onComplete() {
        if (!targetDone) {
          if (cancelled && !requester) {
            tellReceiverCancelled(); // not a clean end: values were dropped since the cancel
            return;
          }
          targetDone = true;
          tellCompleted(target);
        }
      }
    };
  }

  /**
   * A responder reading automatically grants the requester credit for what it was given, unless
   * more of its own values wait than may ({@code bound}): then the credit is withheld until they go
   * out ({@link #releaseWithheld}). So a channel whose responder answers each request from its
   * request observer, on the loop where it cannot be held back itself, holds the requester back
   * instead when the requester reads the answers slower than it sends: what waits stays bounded,
   * and the call does not fail. Loop.
   */
  private void grantUnlessBackedUp() {
    if (queued > bound) {
      withheld = 1; // published before queued is read again; the drain reads them the other way
      if (queued > bound || !WITHHELD.compareAndSet(this, 1, 0)) {
        return; // the drain grants it once what waits has gone out
      }
    }
    int n = delivered;
    delivered = 0;
    inbound.request(n);
  }

  /** After values went out: grants withheld credit, on the loop, once few enough wait. */
  private void releaseWithheld() {
    if (withheld != 0 && queued <= bound && WITHHELD.compareAndSet(this, 1, 0)) {
      runOnLoop(this::grantWithheld);
    }
  }

  /**
   * Grants the credit withheld for what was delivered, unless values wait again beyond the bound
   * (then it is withheld again) or reading has turned manual. Loop.
   */
  private void grantWithheld() {
    if (delivered > 0 && inbound != null && !targetDone && !manual) {
      grantUnlessBackedUp();
    }
  }

  /** The application's observer threw: the call is cancelled and the observer told. Loop. */
  private void observerFailed(RuntimeException e) {
    LOG.log(Level.WARNING, "observer threw; the call is cancelled", e);
    boolean told = targetDone;
    targetDone = true; // before the cancels, which would tell the observer it was cancelled
    Subscription s = inbound;
    if (s != null) {
      s.cancel();
    }
    cancelled(e);
    if (!told) {
      tellError(target, e);
    }
  }

  /** Tells {@code observer} the call failed; what its onError throws is logged. */
  public static void tellError(StreamObserver<?> observer, Throwable t) {
    try {
      observer.onError(t);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "observer's onError threw", e);
    }
  }

  /** Tells {@code observer} the call completed; what its onCompleted throws is logged. */
  public static void tellCompleted(StreamObserver<?> observer) {
    try {
      observer.onCompleted();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "observer's onCompleted threw", e);
    }
  }

  @Override
  public void disableAutoInboundFlowControl() {
    if (flowControlFixed) {
      // A requester reading automatically asked for everything when the call started: nothing
      // could be taken back (grpc-java refuses this too).
      throw new IllegalStateException(
          "the call has started: disable automatic flow control in beforeStart");
    }
    manual = true;
  }

  /**
   * A requester's call is about to start ({@code beforeStart} has returned): from now on its way of
   * reading is fixed, and {@link #disableAutoInboundFlowControl()} throws.
   */
  public void fixFlowControl() {
    flowControlFixed = true;
  }

  @Override
  public void request(int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("count must be positive: " + count);
    }
    long n = count;
    long owed;
    while ((owed = owedCredit) > 0) {
      long take = Math.min(owed, n);
      if (OWED_CREDIT.compareAndSet(this, owed, owed - take)) {
        n -= take;
        break;
      }
    }
    if (n == 0) {
      return;
    }
    Subscription s = inbound;
    if (s != null) {
      s.request(n);
      return;
    }
    long p;
    do {
      p = pendingRequests;
      if (p < 0) { // subscribed meanwhile
        inbound.request(n);
        return;
      }
    } while (!PENDING_REQUESTS.compareAndSet(this, p, p + n));
  }

  @Override
  public void cancel(String message, Throwable cause) {
    cancelRequested = true;
    Subscription s = inbound;
    if (s instanceof RequesterChannel channel) {
      channel.cancelCall(); // its sending half ends too, even after the responses ended
    } else if (s != null) {
      s.cancel(); // CANCEL for the whole call
    }
    cancelled(null);
    String why = message != null ? message : cause != null ? cause.toString() : "cancelled";
    Runnable tell =
        () -> {
          if (!targetDone) {
            targetDone = true;
            target.onError(rules.cancelled(why));
          }
        };
    try {
      // Always as a task: cancel() may come from inside the observer's own onNext.
      loop.execute(tell);
    } catch (RejectedExecutionException e) {
      tell.run(); // the loop is gone: nothing else will signal
    }
  }
}
