package io.millrace.observer.internal;

import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.streams.Payload;
import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One call seen through observers: the values this side sends (the observer the application calls,
 * turned into a Publisher the engine's sink requests from) and the values it receives (a Subscriber
 * that passes them to the application's observer, granting credit as they are delivered).
 *
 * <p>Sending is bounded: values wait here only up to {@code bound} beyond the sink's demand; past
 * that a caller off the event loop waits for demand (a {@link ReentrantLock}, so a virtual thread
 * unmounts), and a caller on the loop, which cannot wait, fails the call.
 */
public final class ObserverCall
    implements ServerCallStreamObserver<Payload>, ClientCallStreamObserver<Payload> {
  private static final System.Logger LOG = System.getLogger(ObserverCall.class.getName());

  private final EventExecutor loop;
  private final boolean sends;
  private final int bound;
  private final int prefetch;
  private final int limit;

  // ------------------------------------------------------------------ sending
  private final Queue<Payload> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicLong demand = new AtomicLong();
  private final AtomicInteger wip = new AtomicInteger();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition space = lock.newCondition();
  private volatile int waiters;
  private volatile Subscriber<? super Payload> sink;
  private volatile boolean completed;
  private volatile Throwable error;
  private volatile Throwable overflow;
  private volatile boolean cancelled;
  private volatile Runnable onReady;
  private volatile Runnable onCancel;
  private boolean terminated; // inside the drain only
  private boolean inOnReady; // loop only
  private boolean readyAgain; // loop only

  // ------------------------------------------------------------------ receiving
  private volatile StreamObserver<Payload> target;
  private volatile Subscription inbound;
  private volatile boolean manual;
  private final AtomicLong pendingRequests = new AtomicLong();
  private boolean targetDone; // loop only
  private int delivered; // loop only

  /** {@code sends}: whether this side sends values on the call (a channel, or a responder). */
  public ObserverCall(EventExecutor loop, int prefetch, boolean sends) {
    this.loop = loop;
    this.sends = sends;
    this.bound = prefetch;
    this.prefetch = prefetch;
    this.limit = Math.max(1, prefetch - (prefetch >> 2));
  }

  // ================================================================== sending: the engine's side

  /** What the application sends, for the engine's sink (one subscriber). */
  public Publisher<Payload> outbound() {
    return this::subscribeOutbound;
  }

  private void subscribeOutbound(Subscriber<? super Payload> s) {
    sink = s;
    s.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {
            if (n <= 0) {
              overflow = new IllegalArgumentException("request-n must be positive: " + n);
              drain();
              return;
            }
            long r;
            long next;
            do {
              r = demand.get();
              next = r + n < 0 ? Long.MAX_VALUE : r + n;
            } while (!demand.compareAndSet(r, next));
            drain();
            ready();
          }

          @Override
          public void cancel() {
            peerCancelled();
          }
        });
    drain();
  }

  /**
   * The handler has returned: as in gRPC, its on-ready handler runs once now if the call is ready
   * (credit may have come before the handler was set), on the loop.
   */
  public void started() {
    if (onReady == null) {
      return;
    }
    if (loop.inEventLoop()) {
      ready();
    } else {
      try {
        loop.execute(this::ready);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // The connection is gone; the call ends with it.
      }
    }
  }

  /** Runs the on-ready handler when the call can send; not reentrant. Called on the loop. */
  private void ready() {
    Runnable handler = onReady;
    if (handler == null || !isReady()) {
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
      failSending(e);
    } finally {
      inOnReady = false;
    }
  }

  /** The peer cancelled, the stream failed or the connection went: stop sending. */
  private void peerCancelled() {
    if (cancelled) {
      return;
    }
    cancelled = true;
    wakeWaiters();
    drain(); // releases what waits
    Runnable handler = onCancel;
    if (handler != null) {
      try {
        handler.run();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "on-cancel handler threw", e);
      }
    }
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      Subscriber<? super Payload> s = sink;
      if (cancelled || terminated) {
        releaseQueued();
      } else if (s != null) {
        Throwable fatal = overflow;
        if (fatal != null) {
          terminated = true;
          releaseQueued();
          s.onError(fatal);
        } else {
          boolean emitted = false;
          while (demand.get() > 0) {
            Payload p = queue.poll();
            if (p == null) {
              break;
            }
            queued.decrementAndGet();
            demand.decrementAndGet();
            emitted = true;
            s.onNext(p);
          }
          if (emitted && waiters > 0) {
            wakeWaiters();
          }
          if (queue.isEmpty() && (completed || error != null)) {
            terminated = true;
            Throwable e = error;
            if (e != null) {
              s.onError(e);
            } else {
              s.onComplete();
            }
          }
        }
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  private void releaseQueued() {
    for (Payload p; (p = queue.poll()) != null; ) {
      queued.decrementAndGet();
      p.release();
    }
  }

  private void wakeWaiters() {
    lock.lock();
    try {
      space.signalAll();
    } finally {
      lock.unlock();
    }
  }

  // ================================================================== sending: the application's

  @Override
  public void onNext(Payload value) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    if (!sends || completed || error != null) {
      value.release();
      throw new IllegalStateException(
          sends
              ? "onNext after onCompleted or onError"
              : "this call sends nothing after its request");
    }
    if (cancelled || overflow != null) {
      value.release(); // the call is over: nothing more goes out (isCancelled says so)
      return;
    }
    queue.offer(value);
    queued.incrementAndGet();
    drain();
    if (queued.get() > bound) {
      if (loop.inEventLoop()) {
        failSending(
            new StreamErrorException(
                ErrorCode.APPLICATION_ERROR,
                "sent faster than the peer reads, on the event loop: follow isReady() and the"
                    + " on-ready handler, or give the responder a handler executor"));
      } else {
        awaitSpace();
      }
    }
  }

  /** Waits until the peer has taken enough that at most {@code bound} values wait. */
  private void awaitSpace() {
    lock.lock();
    try {
      waiters++;
      while (queued.get() > bound && !cancelled && overflow == null) {
        space.await();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the value stays queued; the caller sees the flag
    } finally {
      waiters--;
      lock.unlock();
    }
  }

  private void failSending(Throwable t) {
    LOG.log(Level.WARNING, "call failed: " + t.getMessage());
    overflow = t;
    wakeWaiters();
    drain();
  }

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
    return demand.get() > 0 && !cancelled && !completed && error == null && overflow == null;
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
    this.onReady = onReadyHandler;
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
  }

  // ================================================================== receiving

  /**
   * The observer the received values go to; may be set after the call starts (a responder's channel
   * observer comes from the handler), but before the first value.
   */
  public void receiveWith(StreamObserver<Payload> observer) {
    this.target = observer;
  }

  /** The Subscriber the engine's received values come through. */
  public Subscriber<Payload> inbound() {
    return new Subscriber<>() {
      @Override
      public void onSubscribe(Subscription s) {
        inbound = s;
        long pending = pendingRequests.getAndSet(-1);
        if (!manual) {
          s.request(prefetch);
        } else if (pending > 0) {
          s.request(pending);
        }
      }

      @Override
      public void onNext(Payload p) {
        if (targetDone) {
          p.release();
          return;
        }
        target.onNext(p);
        if (!manual && ++delivered >= limit) {
          int n = delivered;
          delivered = 0;
          inbound.request(n);
        }
      }

      @Override
      public void onError(Throwable t) {
        if (!targetDone) {
          targetDone = true;
          target.onError(t);
        }
      }

      @Override
      public void onComplete() {
        if (!targetDone) {
          targetDone = true;
          target.onCompleted();
        }
      }
    };
  }

  @Override
  public void disableAutoInboundFlowControl() {
    manual = true;
  }

  @Override
  public void request(int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("count must be positive: " + count);
    }
    Subscription s = inbound;
    if (s != null) {
      s.request(count);
      return;
    }
    long p;
    do {
      p = pendingRequests.get();
      if (p < 0) { // subscribed meanwhile
        inbound.request(count);
        return;
      }
    } while (!pendingRequests.compareAndSet(p, p + count));
  }

  @Override
  public void cancel(String message, Throwable cause) {
    Subscription s = inbound;
    if (s != null) {
      s.cancel(); // CANCEL for the whole call; a channel's sending half ends with it
    }
    peerCancelled();
    String why = message != null ? message : cause != null ? cause.toString() : "cancelled";
    Runnable tell =
        () -> {
          if (!targetDone) {
            targetDone = true;
            target.onError(StreamErrorException.received(ErrorCode.CANCELED, why));
          }
        };
    if (loop.inEventLoop()) {
      tell.run();
    } else {
      try {
        loop.execute(tell); // after any value the loop is delivering: signals never overlap
      } catch (java.util.concurrent.RejectedExecutionException e) {
        tell.run(); // the loop is gone: nothing else will signal
      }
    }
  }
}
