package io.millrace.rpc;

import io.netty.util.internal.ThreadExecutorMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Where a blocking handler sends a stream of responses: {@link #send} waits while the caller has
 * not asked for more (credit, then the connection's writability, hold it back: memory stays bounded
 * whatever the handler does) and throws CANCELLED once the call is cancelled, by the caller or by
 * its deadline ({@link ServerContext#cancellation()} tells which).
 *
 * <p>Threading: one thread sends (the handler's). It waits with {@link LockSupport#park}, so
 * virtual threads unmount; sending on a Netty event loop is refused. Demand arrives from the event
 * loop, which only counts and unparks.
 */
public final class ResponseSink<T> {
  private static final AtomicLongFieldUpdater<ResponseSink<?>> DEMAND = newDemandUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicLongFieldUpdater<ResponseSink<?>> newDemandUpdater() {
    return (AtomicLongFieldUpdater) AtomicLongFieldUpdater.newUpdater(ResponseSink.class, "demand");
  }

  private final Subscriber<? super T> downstream;

  /**
   * What the caller asked for and the sender has not taken yet: request(n) adds (from the event
   * loop, or any thread), the sender takes.
   */
  private volatile long demand;

  private volatile boolean cancelled;
  private volatile Thread sender;
  private volatile long invalid;
  private boolean ended;

  /**
   * The sender's thread only: demand it took and has not used. It takes all there is at once, so a
   * send costs no atomic operation while what the caller asked for lasts (one per refill instead).
   * A plain field: a sink handed from one sending thread to another needs a happens-before edge
   * between their sends (as rule 1.3 asks of signals anyway).
   */
  private long taken;

  private ResponseSink(Subscriber<? super T> downstream) {
    this.downstream = downstream;
  }

  /** Sends one response, waiting for the caller to ask for it. */
  public void send(T response) {
    if (ended) {
      throw new IllegalStateException("the responses have ended");
    }
    if (response == null) {
      throw new NullPointerException("response");
    }
    if (cancelled) {
      throw Status.CANCELLED.withMessage("the call was cancelled").asException();
    }
    if (taken == 0) {
      taken = awaitDemand();
    }
    if (taken != Long.MAX_VALUE) {
      taken--;
    }
    downstream.onNext(response);
  }

  /** Takes all the demand there is, waiting for some (or the unbounded marker, left in place). */
  private long awaitDemand() {
    while (true) {
      long d = demand;
      if (d > 0) {
        if (d == Long.MAX_VALUE || DEMAND.compareAndSet(this, d, 0)) {
          return d;
        }
        continue;
      }
      if (ThreadExecutorMap.currentExecutor() != null) {
        throw new IllegalStateException("a blocking send on an event loop would stall it");
      }
      sender = Thread.currentThread();
      if (demand == 0 && !cancelled) {
        LockSupport.park(this);
      }
      sender = null;
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withMessage("interrupted").asException();
      }
      if (cancelled) {
        throw Status.CANCELLED.withMessage("the call was cancelled").asException();
      }
    }
  }

  /** Whether the caller cancelled the call (sending then throws). */
  public boolean isCancelled() {
    return cancelled;
  }

  void complete() {
    if (!ended) {
      ended = true;
      if (invalid != 0) {
        downstream.onError(
            new IllegalArgumentException("request-n must be positive (rule 3.9): " + invalid));
      } else if (!cancelled) {
        downstream.onComplete();
      }
    }
  }

  void fail(Throwable t) {
    if (!ended) {
      ended = true;
      if (invalid != 0) {
        downstream.onError(
            new IllegalArgumentException("request-n must be positive (rule 3.9): " + invalid));
      } else if (!cancelled) {
        downstream.onError(t);
      }
    }
  }

  /**
   * A Publisher that runs {@code body} with a sink, on {@code executor}, when subscribed; the
   * responses end when the body returns (or with its exception). A call cancelled before the
   * executor gets to it (the client's CANCEL, the deadline) does not run the body at all.
   */
  static <T> Publisher<T> publisher(
      java.util.concurrent.Executor executor, java.util.function.Consumer<ResponseSink<T>> body) {
    return subscriber -> {
      ResponseSink<T> sink = new ResponseSink<>(subscriber);
      subscriber.onSubscribe(
          new Subscription() {
            @Override
            public void request(long n) {
              if (n <= 0) { // rule 3.9: the handler's end becomes this error
                sink.invalid = n;
                cancel();
                return;
              }
              long d;
              long next;
              do {
                d = sink.demand;
                next = d + n < 0 ? Long.MAX_VALUE : d + n;
              } while (!DEMAND.compareAndSet(sink, d, next));
              sink.wake();
            }

            @Override
            public void cancel() {
              sink.cancelled = true;
              sink.wake();
            }
          });
      try {
        executor.execute(
            () -> {
              if (sink.cancelled) { // cancelled (or past its deadline) while it waited its turn:
                sink.complete(); // its work is not wanted, so the handler does not run
                return;
              }
              try {
                body.accept(sink);
                sink.complete();
              } catch (Throwable t) { // also what a body throws sneakily: the call always ends
                sink.fail(t);
                if (t instanceof Error e) {
                  throw e;
                }
              }
            });
      } catch (RejectedExecutionException e) { // shut down or saturated: worth a retry elsewhere
        sink.fail(
            Status.UNAVAILABLE
                .withMessage("the server cannot run the handler now")
                .withCause(e)
                .asException());
      }
    };
  }

  private void wake() {
    Thread t = sender;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }
}
