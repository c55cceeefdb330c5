package io.millrace.rpc;

import io.millrace.core.NoRoomException;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.ReadsBuffersInPlace;
import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The caller's side of one call: subscribes to the call's payloads (a new call per subscription)
 * and emits the parsed responses, reading response headers and the trailer on the way; a failure
 * becomes a {@link StatusException}. With a timeout, a timer on the connection's loop cancels the
 * call and fails it with DEADLINE_EXCEEDED.
 *
 * <p>Demand: the trailer that ends a call is one more payload from the connection, but the caller
 * never asked for it, so this reader asks the call for one unit more than its subscriber (once, at
 * the first request). A message that arrives on that unit waits in a one-place buffer until the
 * subscriber asks; the call's end then waits behind it, unless it is a failure and the subscriber
 * asks for nothing more (the failure goes out at once: a call never hangs on demand).
 *
 * <p>Signals to the subscriber go out from one thread at a time: the one that holds the work
 * counter ({@code wip}); a thread that finds it held leaves its work to the holder. Lock-free: a
 * response that arrives with demand and nothing waiting goes straight out for two atomic operations
 * (a lock taken twice cost four). The waiting responses are a single-producer queue (the payloads
 * come one at a time), made when one first has to wait. The end is decided once ({@code over}): by
 * the terminal signal, or by the subscriber's cancel.
 */
final class ResponseReader<Resp>
    implements Publisher<Resp>, Subscriber<Payload>, Subscription, ReadsBuffersInPlace {
  private final Supplier<Publisher<Payload>> call;
  private final Marshaller<Resp> marshaller;
  private final CallOptions options;
  private final boolean oneResponse;
  private final boolean routing;
  private final int maxHeaderBytes;
  private final ScheduledExecutorService timers;
  private final Runnable whenDone;

  private static final AtomicIntegerFieldUpdater<ResponseReader<?>> WIP =
      updater(AtomicIntegerFieldUpdater.newUpdater(ResponseReader.class, "wip"));
  private static final AtomicIntegerFieldUpdater<ResponseReader<?>> SUBSCRIBED =
      updater(AtomicIntegerFieldUpdater.newUpdater(ResponseReader.class, "subscribed"));
  private static final AtomicIntegerFieldUpdater<ResponseReader<?>> OVER =
      updater(AtomicIntegerFieldUpdater.newUpdater(ResponseReader.class, "over"));
  private static final AtomicLongFieldUpdater<ResponseReader<?>> REQUESTED =
      updater(AtomicLongFieldUpdater.newUpdater(ResponseReader.class, "requested"));
  private static final AtomicReferenceFieldUpdater<ResponseReader<?>, Throwable> FAILURE =
      updater(
          AtomicReferenceFieldUpdater.newUpdater(ResponseReader.class, Throwable.class, "failure"));

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <U> U updater(Object u) {
    return (U) u;
  }

  private volatile int subscribed; // 1 once a subscriber has this reader's call
  private Subscriber<? super Resp> downstream; // null once over (rule 3.13); the wip holder's
  private volatile Subscription upstream;
  private volatile ScheduledFuture<?> deadlineTimer;

  private volatile int wip; // signals to the subscriber: held by one thread at a time
  private volatile int over; // 1 once the end was signalled or the subscriber cancelled
  private volatile long requested; // the subscriber's demand, in all
  private volatile Throwable failure; // the end, when it is a failure
  private volatile boolean completed; // the end, when it is a completion
  private volatile Queue<Resp> ready; // made by the payloads' thread when a response has to wait
  private long emitted; // the wip holder's
  private boolean askedOnce; // the subscriber's (its calls are serial)

  // Touched by the thread delivering payloads only.
  private boolean sawHeaders;
  private int responses;

  ResponseReader(
      Supplier<Publisher<Payload>> call,
      Marshaller<Resp> marshaller,
      CallOptions options,
      boolean oneResponse,
      boolean routing,
      int maxHeaderBytes,
      ScheduledExecutorService timers,
      Runnable whenDone) {
    this.call = call;
    this.marshaller = marshaller;
    this.options = options;
    this.oneResponse = oneResponse;
    this.routing = routing;
    this.maxHeaderBytes = maxHeaderBytes;
    this.timers = timers;
    this.whenDone = whenDone;
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      // Each subscription is its own call: a fresh reader carries it.
      new ResponseReader<>(
              call, marshaller, options, oneResponse, routing, maxHeaderBytes, timers, whenDone)
          .subscribe(subscriber);
      return;
    }
    downstream = subscriber;
    if (options.timeout() != null && options.timeout().isZero()) {
      failEarly(
          subscriber,
          Status.DEADLINE_EXCEEDED
              .withMessage("the deadline passed before the call")
              .asException());
      return;
    }
    Publisher<Payload> payloads;
    try {
      payloads = call.get();
    } catch (RuntimeException e) {
      failEarly(subscriber, statusOf(e).asException());
      return;
    }
    payloads.subscribe(this);
  }

  private void failEarly(Subscriber<? super Resp> subscriber, StatusException e) {
    over = 1;
    downstream = null;
    subscriber.onSubscribe(this);
    subscriber.onError(e);
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream = s;
    downstream.onSubscribe(this);
    if (options.timeout() != null) { // after onSubscribe returned: no signal overlaps it
      ScheduledFuture<?> t =
          timers.schedule(
              this::expire, TimeUnit.NANOSECONDS.convert(options.timeout()), TimeUnit.NANOSECONDS);
      deadlineTimer = t;
      if (over != 0) { // ended meanwhile: finished() may have looked before the timer was set
        t.cancel(false);
      }
    }
  }

  private void expire() {
    end(
        Status.DEADLINE_EXCEEDED
            .withMessage("the deadline of " + options.timeout() + " passed")
            .asException(),
        true);
  }

  @Override
  public void onNext(Payload payload) {
    ByteBuf data;
    try {
      data = payload.data();
    } catch (RuntimeException e) { // a payload that cannot give its data (not a received one)
      payload.release();
      end(Status.fromThrowable(e).asException(), true);
      return;
    }
    try {
      onNextInPlace(payload.metadata(), data);
    } finally {
      payload.release();
    }
  }

  @Override
  public void onNextInPlace(ByteBuf metadata, ByteBuf data) {
    Resp value;
    try {
      value = read(metadata, data);
    } catch (RuntimeException e) { // a marshaller, a callback or the metadata failed
      end(e instanceof StatusException se ? se : Status.fromThrowable(e).asException(), true);
      return;
    }
    if (value == null || over != 0 || failure != null) {
      return; // after the end: dropped
    }
    if (wip == 0 && WIP.compareAndSet(this, 0, 1)) {
      Queue<Resp> q = ready;
      if (over != 0) {
        // Cancelled since the check above: dropped (a holder may have let the subscriber go).
      } else if ((q == null || q.isEmpty()) && emitted != requested) {
        emitted++; // the common case: asked for and nothing waiting, so straight out
        downstream.onNext(value);
      } else {
        waitInLine(value);
      }
      int missed = WIP.decrementAndGet(this);
      if (missed != 0) {
        drainLoop(missed);
      }
      return;
    }
    waitInLine(value);
    drain();
  }

  /** Queues a response; on the payloads' thread only. */
  private void waitInLine(Resp value) {
    Queue<Resp> q = ready;
    if (q == null) {
      q = PlatformDependent.newSpscQueue();
      ready = q;
    }
    q.offer(value);
  }

  /** The message a payload carries, or null when it carries none (a trailer alone). */
  private Resp read(ByteBuf metadata, ByteBuf data) {
    if (!routing && metadata != null) {
      int read = readMetadata(metadata, sawHeaders, options, maxHeaderBytes);
      sawHeaders |= (read & TOLD_HEADERS) != 0;
      if ((read & NO_MESSAGE) != 0) {
        return null; // a trailer alone: the completion follows
      }
    }
    responses++;
    return marshaller.parse(data);
  }

  /** {@link #readMetadata}: the headers were told. */
  static final int TOLD_HEADERS = 1;

  /** {@link #readMetadata}: the payload carries no message (a trailer alone). */
  static final int NO_MESSAGE = 2;

  /**
   * Reads a response payload's metadata: tells its headers (unless {@code headersSeen}) and its
   * trailers to the call's callbacks, and throws the status's exception when the status is a
   * failure; returns {@link #TOLD_HEADERS} and {@link #NO_MESSAGE} as they apply.
   */
  static int readMetadata(
      ByteBuf metadata, boolean headersSeen, CallOptions options, int maxHeaderBytes) {
    ResponseMetadata m = ResponseMetadata.decode(metadata, maxHeaderBytes);
    int read = 0;
    if (!m.headers().isEmpty() && !headersSeen) {
      read |= TOLD_HEADERS;
      if (options.headersCallback() != null) {
        options.headersCallback().accept(m.headers());
      }
    }
    Status status = m.status();
    if (status != null) {
      if (options.trailersCallback() != null) {
        options.trailersCallback().accept(m.trailers());
      }
      if (!status.isOk()) {
        throw status.asException(m.trailers());
      }
    }
    return m.noMessage() ? read | NO_MESSAGE : read;
  }

  @Override
  public void onError(Throwable t) {
    end(statusOf(t).asException(), false);
  }

  @Override
  public void onComplete() {
    if (oneResponse && responses == 0) {
      end(Status.INTERNAL.withMessage("the call ended without a response").asException(), false);
      return;
    }
    completed = true;
    drain();
  }

  /**
   * Ends the call with a failure, unless it has ended already; {@code cancelCall} cancels it at the
   * server too. A failure that races with the completion (a deadline as the end arrives) may win.
   */
  private void end(Throwable error, boolean cancelCall) {
    end(error, cancelCall, false);
  }

  /** {@link #end(Throwable, boolean)}; {@code evenAfterCompletion}: a completion not yet sent. */
  private void end(Throwable error, boolean cancelCall, boolean evenAfterCompletion) {
    if (over != 0
        || (completed && !evenAfterCompletion)
        || !FAILURE.compareAndSet(this, null, error)) {
      return;
    }
    if (cancelCall) {
      Subscription s = upstream;
      if (s != null) {
        s.cancel();
      }
    }
    drain();
  }

  /** Signals what can go out: ready responses while asked for, then the end. Any thread. */
  private void drain() {
    if (WIP.getAndIncrement(this) == 0) {
      drainLoop(1);
    }
  }

  /** The wip holder's loop; {@code missed} is the count it holds. */
  private void drainLoop(int missed) {
    while (true) {
      Queue<Resp> q = ready;
      if (over != 0) {
        downstream = null; // over: the subscriber is let go (rule 3.13)
        if (q != null) {
          q.clear(); // nothing more goes out
        }
      } else {
        long e = emitted;
        long r = requested;
        while (e != r && q != null) { // what waits goes out before a failure
          Resp next = q.poll();
          if (next == null) {
            break;
          }
          e++;
          downstream.onNext(next);
          if (over != 0) {
            break;
          }
        }
        emitted = e;
        // The end first, then the queue: a response queued before the end came is seen there.
        boolean done = completed;
        Throwable error = failure;
        q = ready;
        boolean empty = q == null || q.isEmpty();
        if (error != null && (empty || e == requested)) {
          if (OVER.compareAndSet(this, 0, 1)) {
            if (q != null) {
              q.clear();
            }
            Subscriber<? super Resp> d = downstream;
            downstream = null;
            finished();
            d.onError(error);
          }
        } else if (done && empty && OVER.compareAndSet(this, 0, 1)) {
          Subscriber<? super Resp> d = downstream;
          downstream = null;
          finished();
          d.onComplete();
        }
      }
      missed = WIP.addAndGet(this, -missed);
      if (missed == 0) {
        return;
      }
    }
  }

  /**
   * The call is over for the subscriber (ended or cancelled): once, by whoever set {@code over}.
   */
  private void finished() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
    }
    whenDone.run();
  }

  @Override
  public void request(long n) {
    Subscription s = upstream;
    if (n <= 0) {
      end(new IllegalArgumentException("request-n must be positive: " + n), true, true);
      return;
    }
    long forward = n;
    if (!askedOnce) {
      askedOnce = true;
      if (n != Long.MAX_VALUE) {
        forward = n + 1; // the unit the trailer may take
      }
    }
    long r;
    long next;
    do {
      r = requested;
      next = r + n < 0 ? Long.MAX_VALUE : r + n;
    } while (r != Long.MAX_VALUE && !REQUESTED.compareAndSet(this, r, next));
    if (s != null) {
      s.request(forward);
    }
    drain();
  }

  @Override
  public void cancel() {
    boolean wasLive = OVER.compareAndSet(this, 0, 1);
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    if (wasLive) {
      finished();
      drain(); // drops what waits
    }
  }

  /**
   * The status a transport-level failure stands for: the peer's ERROR codes as gRPC clients see the
   * matching HTTP/2 failures, and "CODE: message" texts (a routing server's failures) read back.
   */
  static Status statusOf(Throwable t) {
    if (t instanceof StatusException e) {
      return e.status();
    }
    if (t instanceof NoRoomException) {
      return Status.RESOURCE_EXHAUSTED.withMessage(t.getMessage()).withCause(t);
    }
    if (t instanceof StreamErrorException e) {
      String message = e.getMessage();
      return switch (e.errorCode()) {
        case ErrorCode.APPLICATION_ERROR -> parseStatusText(message).withCause(t);
        case ErrorCode.CANCELED -> Status.CANCELLED.withMessage(message).withCause(t);
        case ErrorCode.INVALID -> Status.INTERNAL.withMessage(message).withCause(t);
        default -> Status.UNAVAILABLE.withMessage(message).withCause(t);
      };
    }
    return Status.UNKNOWN.withMessage(t.toString()).withCause(t);
  }

  /** {@code CODE: message} or {@code CODE} as {@link Status#toString()} writes it; else UNKNOWN. */
  static Status parseStatusText(String text) {
    if (text != null) {
      for (Status.Code c : Status.Code.values()) {
        if (c == Status.Code.OK) {
          continue; // a failure is never OK
        }
        if (text.equals(c.name())) {
          return Status.of(c);
        }
        if (text.startsWith(c.name()) && text.startsWith(": ", c.name().length())) {
          return Status.of(c).withMessage(text.substring(c.name().length() + 2));
        }
      }
    }
    return Status.UNKNOWN.withMessage(text);
  }
}
