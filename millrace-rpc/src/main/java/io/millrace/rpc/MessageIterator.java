package io.millrace.rpc;

import com.google.protobuf.MessageLite;
import io.millrace.streams.internal.ParkedReader;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A stream of messages read by blocking: the responses of a call in the blocking flavour, or the
 * requests of a blocking handler. Messages are asked for ahead of the reader, so that it rarely
 * waits: about a mebibyte of them by the running average of their size, at least {@value
 * #MIN_AHEAD} and at most {@value #MAX_AHEAD} (at first {@value #FIRST_REQUEST}, before a size is
 * known), asked for again each time half of that has been read. Small messages so get a window deep
 * enough that a reader of 8-byte messages is not held to the pace of REQUEST_N round trips (a count
 * of 256 held it to half of what 1024 allows, docs/benchmarks.md), and large ones a few at a time.
 * Credit is counted in messages (RSocket's REQUEST_N), so a stream whose messages suddenly grow may
 * still deliver what was asked for at the old size. {@link #close} cancels the rest. Failures are
 * thrown by {@link #hasNext} as {@link StatusException}.
 *
 * <p>Threading: one thread reads. It waits with {@link LockSupport#park}, so virtual threads
 * unmount; reading on a Netty event loop is refused, since it would stall the loop. The event loop
 * only queues and wakes the reader once per batch of reads ({@link ParkedReader}), never waits.
 */
public final class MessageIterator<T> implements Iterator<T>, AutoCloseable, Subscriber<T> {
  private static final Object COMPLETE = new Object();
  private static final Object CLOSED = new Object();

  /** Messages asked for before any has arrived: their size is not known yet. */
  static final int FIRST_REQUEST = 32;

  /** The most messages asked for ahead of the reader, however small they are. */
  static final int MAX_AHEAD = 1024;

  /** About how many bytes of messages are asked for ahead of the reader (HTTP/2's usual window). */
  static final long BYTES_AHEAD = 1 << 20;

  /** The fewest messages asked for ahead, however large: one to read while the next comes. */
  static final int MIN_AHEAD = 2;

  private final Queue<Object> queue = new ConcurrentLinkedQueue<>();
  private final ParkedReader waiting = new ParkedReader();
  private volatile Subscription upstream;
  private volatile boolean closed;
  private volatile StatusException abortedWith;
  private Object next; // the item hasNext found, or a terminal signal

  // The reader's thread (the first request is counted here, by the thread that makes the iterator).
  private long requested = FIRST_REQUEST;
  private long taken;
  private long averageSize; // a running average of the sizes sampled by window(); 0 until then

  MessageIterator() {}

  @Override
  public void onSubscribe(Subscription s) {
    upstream = s;
    if (closed) {
      s.cancel();
    } else {
      s.request(FIRST_REQUEST);
    }
  }

  @Override
  public void onNext(T item) {
    queue.offer(item);
    wake();
  }

  @Override
  public void onError(Throwable t) {
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
    taken++;
    long ahead = requested - taken;
    // A window is at most MAX_AHEAD: above half of that no request is due, and the message's size
    // is not looked at (the average comes from the messages read as requests fall due).
    int window = ahead <= MAX_AHEAD / 2 ? window(item) : MAX_AHEAD;
    if (ahead <= window / 2) { // one request per half window: a wake-up and a REQUEST_N each
      long more = window - ahead;
      Subscription s = upstream;
      if (s != null && !closed) {
        requested += more;
        s.request(more);
      }
    }
    return item;
  }

  /**
   * How many messages to keep asked for ahead of the reader: about {@link #BYTES_AHEAD} of them by
   * the running average of their serialized size (protobuf messages), between {@link #MIN_AHEAD}
   * and {@link #MAX_AHEAD}; {@link #FIRST_REQUEST} for messages whose size is not known.
   */
  private int window(T item) {
    if (!(item instanceof MessageLite message)) {
      return FIRST_REQUEST;
    }
    long size = message.getSerializedSize() + 8L; // and the frame around it
    averageSize = averageSize == 0 ? size : averageSize + (size - averageSize) / 8;
    return (int) Math.max(MIN_AHEAD, Math.min(MAX_AHEAD, BYTES_AHEAD / averageSize));
  }

  private Object take() {
    if (closed) {
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
    return o == CLOSED ? ended() : o;
  }

  private Object ended() {
    StatusException e = abortedWith;
    return e != null ? new Failure(e) : COMPLETE;
  }

  /**
   * Cancels the stream: no more messages are read and waiting ones are dropped; a reader waiting in
   * {@link #hasNext} on another thread sees the end. Any thread.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    queue.clear();
    queue.offer(CLOSED); // for a reader waiting on another thread
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
