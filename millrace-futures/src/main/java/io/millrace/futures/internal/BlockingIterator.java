package io.millrace.futures.internal;

import io.millrace.core.StreamErrorException;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.frame.ErrorCode;
import io.millrace.futures.BlockingStream;
import io.millrace.streams.BacklogExceededException;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.Backlog;
import io.millrace.streams.internal.ParkedReader;
import io.millrace.streams.internal.ReadAhead;
import io.netty.util.internal.ThreadExecutorMap;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A stream's payloads read by blocking. The reader asks for payloads ahead of itself by {@link
 * ReadAhead}: about a mebibyte of them by their running average size, between two and 4,096, asked
 * for again each time half of that is read, so a fast reader of small payloads costs a wake-up of
 * the loop per two thousand payloads, not per 48 (the quarter of the prefetch it used to ask for:
 * 8-byte streams ran at a ninth of the core's rate). What waits for a slow reader is that window
 * and, below it, the credit window's own prefetch. Since credit counts payloads, a peer whose
 * payloads grow after it was granted credit could fill that window with large ones: past {@link
 * io.millrace.streams.internal.Backlog#limit} bytes waiting (the first request's payloads exempt)
 * the stream is cancelled, and the reader gets the error after what waits. So it is when what waits
 * for readers on the whole connection would pass its limit ({@link
 * io.millrace.core.ConnectionConfig#maxUnreadBytes()}).
 *
 * <p>The event loop never waits here: it adds to a lock-free queue and wakes the reader once per
 * batch of reads ({@link ParkedReader}; a {@code LinkedBlockingQueue} would have the loop take the
 * reader's lock to signal it, and park when the reader holds it, which the suite's blocking
 * detector caught). The reader parks, so a virtual thread unmounts while it waits.
 */
public final class BlockingIterator implements Subscriber<Payload>, BlockingStream {
  private static final Object COMPLETE = new Object();
  private static final Object CLOSED = new Object();

  private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();

  private final ParkedReader waiting = new ParkedReader();

  private volatile Subscription subscription;
  private volatile boolean closed;

  /**
   * The payload hasNext() took and next() has not: set by the reader, taken by next() or by a close
   * from any thread (atomically, so that exactly one of them has it).
   */
  private volatile Payload next;

  private static final VarHandle NEXT;

  static {
    try {
      NEXT = MethodHandles.lookup().findVarHandle(BlockingIterator.class, "next", Payload.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // Reader thread only.
  private boolean done;
  private final ReadAhead ahead = new ReadAhead();

  /** The bytes that wait: the loop counts what it queues, the reader what it takes. */
  private final Backlog backlog = new Backlog(this);

  /** Cancelled for its backlog: later payloads are dropped. Event loop only. */
  private boolean overflowed;

  /** The connection's budget that what waits is charged to, once found. Event loop only. */
  private UnreadBudget unread;

  /** The subscription, when it can tell the connection's budget. */
  private UnreadBudget.Source budgetSource;

  public BlockingIterator() {}

  // ------------------------------------------------------------------ Subscriber (event loop)

  @Override
  public void onSubscribe(Subscription s) {
    if (subscription != null) {
      s.cancel(); // rule 2.5: one subscription, the first
      return;
    }
    if (s instanceof UnreadBudget.Source source) {
      budgetSource = source; // (before the first payload: rule 1.3 orders the signals)
    }
    subscription = s;
    if (closed) {
      s.cancel();
    } else {
      s.request(ReadAhead.FIRST_REQUEST);
    }
  }

  @Override
  public void onNext(Payload p) {
    if (p == null) {
      throw new NullPointerException("payload"); // rule 2.13
    }
    if (overflowed || closed) {
      p.release(); // sent before the peer saw the CANCEL
      return;
    }
    UnreadBudget budget = unread;
    if (budget == null && budgetSource != null) {
      budget = unread = budgetSource.unreadBudget();
    }
    BacklogExceededException tooMuch = backlog.admit(sizeOf(p), budget);
    if (tooMuch != null) {
      overflowed = true;
      p.release();
      subscription.cancel();
      offer(new Failure(tooMuch)); // after what waits
      return;
    }
    offer(p);
    if (closed) {
      releaseQueued(); // closed meanwhile: nobody will read it (the CLOSED mark stays)
    }
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("error"); // rule 2.13
    }
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
    if (ThreadExecutorMap.currentExecutor() != null) {
      throw new IllegalStateException("a blocking read on an event loop would stall it");
    }
    Object o;
    try {
      o = waiting.take(queue);
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
    Payload p = (Payload) o;
    long size = sizeOf(p);
    backlog.taken(size);
    next = p;
    if (closed && NEXT.compareAndSet(this, p, null)) {
      p.release(); // closed by another thread meanwhile, whose close did not see it
      done = true;
      return false;
    }
    if (ahead.take()) {
      long more = ahead.more(size);
      if (more > 0) {
        subscription.request(more);
      }
    }
    return true;
  }

  @Override
  public Payload next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Payload p = (Payload) NEXT.getAndSet(this, null);
    if (p == null) {
      throw new NoSuchElementException("the stream was closed");
    }
    return p;
  }

  /**
   * Cancels the stream and releases what was not read. From any thread: a reader waiting in {@link
   * #hasNext()} wakes and sees the end.
   */
  @Override
  public void close() {
    Payload unread = (Payload) NEXT.getAndSet(this, null); // taken by hasNext, never by next
    if (unread != null) {
      unread.release();
    }
    if (closed) {
      return;
    }
    closed = true;
    backlog.dropped(); // what waits no longer counts against the connection
    Subscription s = subscription;
    if (s != null) {
      s.cancel(); // nothing if the stream already ended
    }
    releaseQueued();
    offer(CLOSED);
  }

  /** Adds {@code o} and wakes the reader if it waits. Never blocks (the event loop calls it). */
  private void offer(Object o) {
    queue.offer(o);
    waiting.signal();
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

  /** Metadata and data, without wrapping a received copy in a buffer as {@code data()} would. */
  private static long sizeOf(Payload p) {
    return p.length();
  }

  private static final class Failure {
    final Throwable error;

    Failure(Throwable error) {
      this.error = error;
    }
  }
}
