package io.millrace.futures.internal;

import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.futures.BlockingStream;
import io.millrace.streams.Payload;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A stream's payloads read by blocking. The credit window under it already holds up to {@code
 * prefetch} payloads ahead of demand, so the reader asks for a quarter of that at a time (again
 * once three quarters of a batch is read): at most 1.25 times the prefetch waits for a slow reader,
 * and a fast one costs one wake-up of the loop per batch.
 *
 * <p>The event loop never waits here: it adds to a lock-free queue and unparks the reader if one is
 * parked (a {@code LinkedBlockingQueue} would have the loop take the reader's lock to signal it,
 * and park when the reader holds it, which the suite's blocking detector caught). The reader parks
 * with {@link LockSupport}, so a virtual thread unmounts while it waits.
 */
public final class BlockingIterator implements Subscriber<Payload>, BlockingStream {
  private static final Object COMPLETE = new Object();
  private static final Object CLOSED = new Object();

  private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();

  /** The reader while it is parked waiting, else null. */
  private volatile Thread waiter;

  /** Whether a task that wakes the reader is pending on the event loop that fed it. */
  private volatile int wakeScheduled;

  private final Runnable wake = this::wakeNow;

  private static final AtomicIntegerFieldUpdater<BlockingIterator> WAKE_SCHEDULED =
      AtomicIntegerFieldUpdater.newUpdater(BlockingIterator.class, "wakeScheduled");

  private final int batch;
  private final int limit;
  private volatile Subscription subscription;
  private volatile boolean closed;

  // Reader thread only.
  private Thread reader;
  private Payload next;
  private boolean done;
  private int consumed;

  public BlockingIterator(int prefetch) {
    this.batch = Math.max(1, prefetch >> 2);
    this.limit = Math.max(1, batch - (batch >> 2));
  }

  // ------------------------------------------------------------------ Subscriber (event loop)

  @Override
  public void onSubscribe(Subscription s) {
    subscription = s;
    if (closed) {
      s.cancel();
    } else {
      s.request(batch);
    }
  }

  @Override
  public void onNext(Payload p) {
    offer(p);
    if (closed) {
      releaseQueued(); // closed meanwhile: nobody will read it (the CLOSED mark stays)
    }
  }

  @Override
  public void onError(Throwable t) {
    offer(new Failure(t));
  }

  @Override
  public void onComplete() {
    offer(COMPLETE);
  }

  // ------------------------------------------------------------------ the reader

  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (done) {
      return false;
    }
    reader = Thread.currentThread();
    if (ThreadExecutorMap.currentExecutor() != null) {
      throw new IllegalStateException("a blocking read on an event loop would stall it");
    }
    Object o;
    try {
      o = take();
    } catch (InterruptedException e) {
      close();
      Thread.currentThread().interrupt();
      throw StreamErrorException.received(
          ErrorCode.CANCELED, "interrupted while waiting: cancelled");
    }
    if (o == COMPLETE) {
      done = true;
      return false;
    }
    if (o == CLOSED) {
      done = true;
      releaseQueued();
      return false; // closed, perhaps by another thread while this one waited
    }
    if (o instanceof Failure) {
      done = true;
      closed = true;
      Throwable t = ((Failure) o).error;
      throw t instanceof RuntimeException ? (RuntimeException) t : new RuntimeException(t);
    }
    next = (Payload) o;
    if (++consumed == limit) {
      consumed = 0;
      subscription.request(limit);
    }
    return true;
  }

  @Override
  public Payload next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Payload p = next;
    next = null;
    return p;
  }

  /**
   * Cancels the stream and releases what was not read. From any thread: a reader waiting in {@link
   * #hasNext()} wakes and sees the end.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Subscription s = subscription;
    if (s != null) {
      s.cancel(); // nothing if the stream already ended
    }
    if (Thread.currentThread() == reader && next != null) {
      Payload unread = next; // taken by hasNext, never by next
      next = null;
      unread.release();
    }
    releaseQueued();
    offer(CLOSED);
  }

  /**
   * Adds {@code o} and wakes the reader if it waits. Never blocks (the event loop calls it). On an
   * event loop the wake-up is a task that runs after the loop's current batch of reads: a reader
   * that shares a core with the loop then takes a batch per wake-up, where waking it per payload
   * cost two context switches a payload (0.65 M/s on one core).
   */
  private void offer(Object o) {
    queue.offer(o);
    if (waiter == null) {
      return;
    }
    EventExecutor loop = ThreadExecutorMap.currentExecutor();
    if (loop == null) {
      wakeNow();
    } else if (WAKE_SCHEDULED.compareAndSet(this, 0, 1)) {
      try {
        loop.execute(wake);
      } catch (RejectedExecutionException e) {
        wakeNow(); // the loop is shutting down
      }
    }
  }

  /** Wakes the reader that waits now, if any (a reader that woke by itself re-checks and parks). */
  private void wakeNow() {
    wakeScheduled = 0;
    Thread w = waiter;
    if (w != null) {
      LockSupport.unpark(w);
    }
  }

  /**
   * The next entry, parking until there is one. The reader publishes itself before its last look at
   * the queue, and {@link #offer} adds before it looks for a reader: one of the two sees the other,
   * so no wake-up is lost.
   */
  private Object take() throws InterruptedException {
    Object o = queue.poll();
    if (o != null) {
      return o;
    }
    waiter = Thread.currentThread();
    try {
      while ((o = queue.poll()) == null) {
        LockSupport.park(this);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
      return o;
    } finally {
      waiter = null;
    }
  }

  /** Releases every payload queued; the CLOSED mark, if taken, goes back once at the end. */
  private void releaseQueued() {
    boolean sawClosed = false;
    for (Object o; (o = queue.poll()) != null; ) {
      if (o instanceof Payload) {
        ((Payload) o).release();
      } else if (o == CLOSED) {
        sawClosed = true; // (a payload may come after it: the loop had passed its check)
      }
    }
    if (sawClosed) {
      offer(CLOSED); // for the reader
    }
  }

  private static final class Failure {
    final Throwable error;

    Failure(Throwable error) {
      this.error = error;
    }
  }
}
