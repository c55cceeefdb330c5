package io.millrace.rpc;

import com.google.protobuf.MessageLite;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.streams.BacklogExceededException;
import io.millrace.streams.internal.Backlog;
import io.millrace.streams.internal.ParkedReader;
import io.millrace.streams.internal.ReadAhead;
import io.millrace.streams.internal.SerialSubscription;
import io.netty.util.internal.PlatformDependent;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Queue;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A stream of messages read by blocking: the responses of a call in the blocking flavour, or the
 * requests of a blocking handler. Messages are asked for ahead of the reader by {@link ReadAhead}:
 * about a mebibyte of them by their running average size (their serialized size), between two and
 * 4,096. {@link #close} cancels the rest. Failures are thrown by {@link #hasNext} as {@link
 * StatusException}. Credit counts messages, so a peer whose messages grow after it was granted
 * credit could fill that window with large ones: past {@link Backlog#limit} serialized bytes
 * waiting (the first request's messages exempt; other marshallers' objects count by number only),
 * the stream is cancelled and the reader gets RESOURCE_EXHAUSTED after what waits. So it is when
 * what waits for readers on the whole connection would pass its limit ({@link
 * io.millrace.core.ConnectionConfig#maxUnreadBytes()}): a server's call charges its connection, a
 * client's when its responses come through the subscription it was given (not an interceptor's).
 * There each message counts its serialized size and 64 bytes; another marshaller's, 64 bytes.
 *
 * <p>Threading: one thread reads. It waits with {@link LockSupport#park}, so virtual threads
 * unmount; reading on a Netty event loop is refused, since it would stall the loop. The event loop
 * only queues and wakes the reader once per batch of reads ({@link ParkedReader}), never waits.
 */
public final class MessageIterator<T> implements Iterator<T>, AutoCloseable, Subscriber<T> {
  private static final Object COMPLETE = new Object();
  private static final Object CLOSED = new Object();

  /**
   * Slots per array of the queue (4 or 8 bytes each): a new array per this many messages, and the
   * queue holds as many arrays as it needs (it is bounded by the credit asked for, not by itself).
   */
  private static final int QUEUE_CHUNK = 256;

  /**
   * What arrived and the reader has not taken. Many producers (the loop, a closing thread), one
   * consumer (the reader): an array-backed queue, one atomic operation and no node per message
   * where a linked one took three and 24 bytes. So only a read takes from it: after a close, what
   * waits is dropped by the next read, or with the iterator (which a reader that closes it drops).
   */
  private final Queue<Object> queue = PlatformDependent.newMpscQueue(QUEUE_CHUNK, 1 << 30);

  private final ParkedReader waiting = new ParkedReader();
  private volatile Subscription upstream;
  private volatile boolean closed;
  private volatile StatusException abortedWith;
  private Object next; // the item hasNext found, or a terminal signal

  // The reader's thread (the first request is counted there, by the thread that makes the
  // iterator).
  private final ReadAhead ahead = new ReadAhead();

  /** The serialized bytes that wait: the loop counts what it queues, the reader what it takes. */
  private final Backlog backlog = new Backlog(this);

  // The signalling thread (the loop) only.
  private boolean overflowed; // the stream was cancelled for its backlog: later messages dropped

  /**
   * The connection's budget that what waits is charged to: given (a server's call), else found
   * through the subscription ({@link #budgetSource}) when the first message comes; null: none.
   */
  private UnreadBudget unread;

  /** The subscription, when it can tell the connection's budget. */
  private UnreadBudget.Source budgetSource;

  /** {@code unread}: the budget of the connection the messages come from, or null to find it. */
  MessageIterator(UnreadBudget unread) {
    this.unread = unread;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (s == null) {
      throw new NullPointerException("subscription"); // rule 2.13
    }
    if (upstream != null) {
      s.cancel(); // rule 2.5: one subscription
      return;
    }
    // The reader asks for more on its thread while the loop may cancel for the backlog (and close()
    // may come from any thread): one at a time to the upstream (rule 2.7), which may be any
    // Publisher's (Blocking.iterator, an interceptor's). It is called once per half window.
    SerialSubscription serial = new SerialSubscription();
    if (s instanceof UnreadBudget.Source source) {
      budgetSource = source; // (before the first message: rule 1.3 orders the signals)
    }
    upstream = serial;
    serial.set(s);
    if (closed) {
      serial.cancel();
    } else {
      serial.request(ReadAhead.FIRST_REQUEST);
    }
  }

  @Override
  public void onNext(T item) {
    if (item == null) {
      throw new NullPointerException("item"); // rule 2.13
    }
    if (overflowed || closed) {
      return; // sent before the peer saw the CANCEL
    }
    BacklogExceededException tooMuch = backlog.admit(bytesOf(item), budget());
    if (tooMuch != null) {
      overflowed = true;
      upstream.cancel();
      String why = tooMuch.getMessage();
      queue.offer(new Failure(Status.RESOURCE_EXHAUSTED.withMessage(why).asException()));
      wake(); // the reader takes what waits, then the failure
      return;
    }
    queue.offer(item);
    wake();
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable"); // rule 2.13
    }
    queue.offer(new Failure(t));
    wake();
  }

  @Override
  public void onComplete() {
    queue.offer(COMPLETE);
    wake();
  }

  private void wake() {
    waiting.signal();
  }

  /** The connection's budget, once known. The loop. */
  private UnreadBudget budget() {
    UnreadBudget b = unread;
    if (b == null && budgetSource != null) {
      b = unread = budgetSource.unreadBudget();
    }
    return b;
  }

  /**
   * Waits for the next message or the end. Throws {@link StatusException} when the stream failed
   * (and CANCELLED, with the thread's interrupt flag kept, when the reader is interrupted).
   */
  @Override
  public boolean hasNext() {
    if (next == null) {
      next = take();
    }
    if (next instanceof Failure f) {
      throw f.error instanceof StatusException se
          ? se
          : ResponseReader.statusOf(f.error).asException();
    }
    return next != COMPLETE;
  }

  @Override
  @SuppressWarnings("unchecked")
  public T next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    T item = (T) next;
    next = null;
    long size = sizeOf(item);
    backlog.taken(Math.max(size, 0));
    if (ahead.take() && !closed) {
      Subscription s = upstream;
      long more = s == null ? 0 : ahead.more(size);
      if (more > 0) {
        s.request(more);
      }
    }
    return item;
  }

  /**
   * A message's serialized size (protobuf messages, which keep it once computed), or -1 when it is
   * not known.
   */
  private static long sizeOf(Object item) {
    return item instanceof MessageLite message ? message.getSerializedSize() : -1;
  }

  /**
   * The bytes a message is counted as waiting: another marshaller's objects are bounded only by
   * their count (the credit).
   */
  private static long bytesOf(Object item) {
    return item instanceof MessageLite message ? message.getSerializedSize() : 0;
  }

  private Object take() {
    if (closed) {
      queue.clear(); // closed: the reader drops what waits
      return ended();
    }
    Object o = queue.poll();
    if (o == null) {
      if (ThreadExecutorMap.currentExecutor() != null) {
        throw new IllegalStateException("a blocking read on an event loop would stall it");
      }
      try {
        o = waiting.take(queue);
      } catch (InterruptedException e) {
        close();
        Thread.currentThread().interrupt();
        return new Failure(Status.CANCELLED.withMessage("interrupted").asException());
      }
    }
    if (o == CLOSED || closed) { // closed while this read waited: what it found is not returned
      queue.clear();
      return ended();
    }
    return o;
  }

  private Object ended() {
    StatusException e = abortedWith;
    return e != null ? new Failure(e) : COMPLETE;
  }

  /**
   * Cancels the stream: no more messages are read, and waiting ones are never returned (the next
   * read drops them, else they go with the iterator), but for one that {@link #hasNext} already
   * returned true for, which {@link #next} still returns; a reader waiting in {@link #hasNext} on
   * another thread sees the end. Any thread.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    backlog.dropped(); // what waits no longer counts against the connection
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    queue.offer(CLOSED); // for a reader waiting on another thread, which drops what waits
    wake();
  }

  /**
   * Ends the stream with {@code why}: a waiting reader wakes and {@link #hasNext} throws it (a
   * blocking handler's requests when its call is cancelled or its deadline passes). Any thread.
   */
  void abort(StatusException why) {
    abortedWith = why;
    close();
  }

  private record Failure(Throwable error) {}
}
