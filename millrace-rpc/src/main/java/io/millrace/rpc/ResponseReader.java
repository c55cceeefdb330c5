package io.millrace.rpc;

import io.millrace.core.NoRoomException;
import io.millrace.core.StreamErrorException;
import io.millrace.core.internal.Failures;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.BacklogExceededException;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.LoopDrain;
import io.millrace.streams.internal.ReadsBuffersInPlace;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>Threading: every signal to the subscriber comes from the connection's event loop, where the
 * payloads arrive (the streams layer's publishers signal there only). So a response that arrives
 * with demand and nothing waiting goes straight out with no atomic operation, and what waits is a
 * plain queue. The subscriber's {@link #request} and {@link #cancel}, and a failure, may come from
 * any thread: they update atomic state and, off the loop, schedule one drain task ({@link
 * LoopDrain}: a burst of them costs one task). Nothing is signalled before the subscriber's {@code
 * onSubscribe} has returned (rule 1.3), even when that runs on another thread while the loop
 * already holds responses. The end is decided once ({@code over}): by the terminal signal, by the
 * subscriber's cancel, or by a thread that found the loop shut down. Two ends come from elsewhere:
 * a call that fails before it starts (a deadline of zero, a request that cannot be made) fails on
 * the subscribing thread, and a loop that has shut down is told from the thread that completes its
 * termination, once the loop's thread has stopped.
 */
final class ResponseReader<Resp> extends LoopDrain
    implements Publisher<Resp>,
        Subscriber<Payload>,
        Subscription,
        ReadsBuffersInPlace,
        UnreadBudget.Source {
  private final Supplier<Publisher<Payload>> call;
  private final Marshaller<Resp> marshaller;
  private final CallOptions options;
  private final boolean oneResponse;
  private final boolean routing;
  private final int maxHeaderBytes;
  private final Runnable whenDone;

  private static final AtomicIntegerFieldUpdater<ResponseReader<?>> SUBSCRIBED =
      updater(AtomicIntegerFieldUpdater.newUpdater(ResponseReader.class, "subscribed"));
  private static final AtomicIntegerFieldUpdater<ResponseReader<?>> OVER =
      updater(AtomicIntegerFieldUpdater.newUpdater(ResponseReader.class, "over"));
  private static final AtomicLongFieldUpdater<ResponseReader<?>> REQUESTED =
      updater(AtomicLongFieldUpdater.newUpdater(ResponseReader.class, "requested"));
  private static final AtomicReferenceFieldUpdater<ResponseReader<?>, Throwable> FAILURE =
      updater(
          AtomicReferenceFieldUpdater.newUpdater(ResponseReader.class, Throwable.class, "failure"));

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<ResponseReader, Subscriber> DOWNSTREAM =
      AtomicReferenceFieldUpdater.newUpdater(ResponseReader.class, Subscriber.class, "downstream");

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <U> U updater(Object u) {
    return (U) u;
  }

  private volatile int subscribed; // 1 once a subscriber has this reader's call
  private volatile Subscriber<? super Resp> downstream; // taken once it ends (rule 3.13)
  private volatile Subscription upstream;
  private volatile ScheduledFuture<?> deadlineTimer;
  private volatile boolean onSubscribeReturned;
  private volatile boolean drainWaitsForOnSubscribe; // the loop held back until it returns

  // 0 while live; ENDED once the end was signalled or the subscriber cancelled; LOOP_GONE once the
  // loop was found shut down, with the end still to tell (the subscriber is kept for it).
  private volatile int over;
  private static final int ENDED = 1;
  private static final int LOOP_GONE = 2;
  private volatile long requested; // the subscriber's demand, in all
  private volatile Throwable failure; // the end, when it is a failure
  private volatile boolean completed; // the end, when it is a completion
  private boolean askedOnce; // the subscriber's (its calls are serial)

  // The loop's.
  private ArrayDeque<Resp> ready; // responses waiting for demand (or for onSubscribe to return)
  private long emitted;
  private boolean draining;
  private boolean missed;
  private boolean sawHeaders;
  private int responses;

  ResponseReader(
      Supplier<Publisher<Payload>> call,
      Marshaller<Resp> marshaller,
      CallOptions options,
      boolean oneResponse,
      boolean routing,
      int maxHeaderBytes,
      EventExecutor loop,
      Runnable whenDone) {
    super(Objects.requireNonNull(loop, "loop"));
    this.call = call;
    this.marshaller = marshaller;
    this.options = options;
    this.oneResponse = oneResponse;
    this.routing = routing;
    this.maxHeaderBytes = maxHeaderBytes;
    this.whenDone = whenDone;
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    Objects.requireNonNull(subscriber, "subscriber"); // rule 1.9
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      // Each subscription is its own call: a fresh reader carries it.
      new ResponseReader<>(
              call, marshaller, options, oneResponse, routing, maxHeaderBytes, loop, whenDone)
          .subscribe(subscriber);
      return;
    }
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
    downstream = subscriber;
    payloads.subscribe(this);
  }

  private void failEarly(Subscriber<? super Resp> subscriber, StatusException e) {
    over = ENDED; // nothing else will signal: the subscriber's requests and cancel do nothing
    whenDone.run(); // (a channel's requests were never subscribed: closing them is a no-op)
    subscriber.onSubscribe(this);
    subscriber.onError(e);
  }

  /** The budget of the call's connection, for a blocking reader of its responses. */
  @Override
  public UnreadBudget unreadBudget() {
    return upstream instanceof UnreadBudget.Source source ? source.unreadBudget() : null;
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream = s;
    downstream.onSubscribe(this);
    onSubscribeReturned = true;
    // What the loop held back while onSubscribe ran, and what the subscriber did inside it (a
    // failed request, a cancel) go out now: either this sees the loop's flag, or the loop, which
    // sets the flag before it looks again, sees onSubscribeReturned.
    if (over == LOOP_GONE) {
      tellLoopGone(); // found while onSubscribe ran
      return;
    }
    if (drainWaitsForOnSubscribe || failure != null || over != 0) {
      signal();
    }
    if (options.timeout() != null) { // after onSubscribe returned: no signal overlaps it
      ScheduledFuture<?> t;
      try {
        t =
            loop.schedule(
                this::expire,
                TimeUnit.NANOSECONDS.convert(options.timeout()),
                TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) { // the loop has shut down: so has the connection
        end(Status.UNAVAILABLE.withMessage(LOOP_SHUT_DOWN).withCause(e).asException(), true);
        return;
      }
      deadlineTimer = t;
      if (over != 0) { // ended meanwhile: finished() may have looked before the timer was set
        t.cancel(false);
      }
    }
  }

  private static final String LOOP_SHUT_DOWN = "the connection's event loop has shut down";

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

  /** A response payload, on the loop. */
  @Override
  public void onNextInPlace(ByteBuf metadata, ByteBuf data) {
    assert loop.inEventLoop() : "responses arrive on the connection's loop";
    Resp value;
    try {
      value = read(metadata, data);
    } catch (Throwable e) { // a marshaller, a callback or the metadata failed
      Failures.throwIfFatal(e);
      end(e instanceof StatusException se ? se : Status.fromThrowable(e).asException(), true);
      return;
    }
    if (value == null || over != 0 || failure != null) {
      return; // after the end: dropped
    }
    ArrayDeque<Resp> q = ready;
    if (!draining && (q == null || q.isEmpty()) && emitted != requested && onSubscribeReturned) {
      Subscriber<? super Resp> d = downstream;
      if (d == null) {
        return; // let go meanwhile (the loop is shutting down)
      }
      emitted++; // the common case: asked for and nothing waiting, so straight out
      draining = true;
      try {
        d.onNext(value);
      } catch (Throwable e) {
        Failures.throwIfFatal(e);
        // The subscriber's onNext threw (rule 2.13 forbids it): told, and the call cancelled, as
        // from the drain; not thrown on into the Publisher of payloads (rule 2.13 binds this too).
        draining = false;
        end(statusOf(e).asException(), true, true);
        return;
      } finally {
        draining = false;
      }
      if (missed) {
        drain(); // the subscriber asked or cancelled inside onNext
      }
      return;
    }
    if (q == null) {
      q = new ArrayDeque<>(2);
      ready = q;
    }
    q.add(value);
    drain();
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
    signal();
  }

  /**
   * Ends the call with a failure, unless it has ended already; {@code cancelCall} cancels it at the
   * server too. A failure that races with the completion (a deadline as the end arrives) may win.
   * Any thread.
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
    signal();
  }

  /** Signals what can go out: waiting responses while asked for, then the end. Loop only. */
  @Override
  protected void drain() {
    if (draining) {
      missed = true;
      return;
    }
    draining = true;
    try {
      do {
        missed = false;
        if (!onSubscribeReturned) {
          drainWaitsForOnSubscribe = true;
          if (!onSubscribeReturned) {
            return; // onSubscribe signals once it has returned
          }
        }
        ArrayDeque<Resp> q = ready;
        Subscriber<? super Resp> d = downstream;
        if (d == null) {
          return; // told its end already
        }
        long r = requested;
        while (over == 0 && q != null && emitted != r && !q.isEmpty()) { // what waits goes first
          emitted++;
          try {
            d.onNext(q.poll());
          } catch (Throwable e) {
            Failures.throwIfFatal(e);
            // The subscriber's onNext threw (rule 2.13 forbids it): the call is cancelled and the
            // subscriber told (UNKNOWN, its exception the cause), as the streams layer tells one.
            q.clear();
            end(statusOf(e).asException(), true, true);
            break;
          }
          r = requested;
        }
        if (over != 0) { // cancelled (perhaps inside onNext), or the loop found gone
          if (over == ENDED) {
            downstream = null; // the subscriber is let go (rule 3.13)
          }
          if (q != null) {
            q.clear(); // nothing more goes out
          }
          return;
        }
        // The end goes out once nothing waits; a failure also when the subscriber asks no more.
        Throwable error = failure;
        boolean empty = q == null || q.isEmpty();
        if (error != null && (empty || emitted == requested)) {
          if (q != null) {
            q.clear();
          }
          terminate(error);
          return;
        }
        if (completed && empty) {
          terminate(null);
          return;
        }
      } while (missed);
    } finally {
      draining = false;
    }
  }

  /** Tells the end ({@code error}, or null for the completion), once, unless cancelled first. */
  private void terminate(Throwable error) {
    if (!OVER.compareAndSet(this, 0, ENDED)) {
      return;
    }
    Subscriber<? super Resp> d = downstream; // only whoever ends the call takes the subscriber
    downstream = null;
    finished();
    if (error == null) {
      d.onComplete();
    } else {
      d.onError(error);
    }
  }

  /**
   * The loop is shutting down, so the drain this thread asked for may never run: the call ends with
   * its failure, or UNAVAILABLE, told once the loop's thread has stopped (its last tasks may still
   * be signalling) and the subscriber's onSubscribe has returned. A call that had ended or was
   * cancelled keeps its state.
   */
  @Override
  protected void loopGone() {
    // The failure first: once over is LOOP_GONE, onSubscribe's thread may tell it. (Unread if the
    // call has ended meanwhile.) Netty's loops as Millrace makes them have unbounded task queues,
    // so a refused task means the loop is shutting down, and its termination comes.
    FAILURE.compareAndSet(this, null, Status.UNAVAILABLE.withMessage(LOOP_SHUT_DOWN).asException());
    if (!OVER.compareAndSet(this, 0, LOOP_GONE)) {
      return;
    }
    finished();
    loop.terminationFuture().addListener(f -> tellLoopGone());
  }

  /**
   * Tells the end {@link #loopGone} decided, once both the loop's thread has stopped and the
   * subscriber's onSubscribe has returned: whichever comes second tells it. Any thread.
   */
  @SuppressWarnings("unchecked")
  private void tellLoopGone() {
    if (!onSubscribeReturned || !loop.terminationFuture().isDone()) {
      return; // the other of the two tells it
    }
    Subscriber<? super Resp> d = (Subscriber<? super Resp>) DOWNSTREAM.getAndSet(this, null);
    if (d != null) {
      d.onError(failure);
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
    if (over != 0) {
      return; // ended or cancelled (rule 3.6)
    }
    Subscription s = upstream;
    if (n <= 0) {
      end(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n), true, true);
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
    signal(); // what waits may go out now
  }

  @Override
  public void cancel() {
    boolean wasLive = OVER.compareAndSet(this, 0, ENDED);
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    if (wasLive) {
      finished();
      signal(); // drops what waits and lets the subscriber go
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
    if (t instanceof NoRoomException || t instanceof BacklogExceededException) {
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
