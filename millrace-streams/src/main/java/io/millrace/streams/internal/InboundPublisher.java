package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Failures;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.BacklogExceededException;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.lang.ref.WeakReference;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The payloads a peer sends on one stream, as a single-subscriber Publisher: downstream demand
 * becomes credit (REQUEST_N), cancellation becomes CANCEL, the stream's end becomes onComplete or
 * onError.
 *
 * <p>Credit. A subscriber that requests {@link Long#MAX_VALUE} gets unbounded credit and its
 * payloads straight from the read (no queue; the transport holds the peer back). Otherwise credit
 * follows demand: the peer may send what the subscriber has asked for and not yet received, plus a
 * prefetch ahead of it. Credit is topped up with one REQUEST_N once it has fallen three quarters of
 * the prefetch short of that, so a subscriber that asks for one at a time costs a frame per three
 * quarters of the prefetch, and one that asks for many keeps as many in flight. What arrives beyond
 * the subscriber's demand waits in a queue: at most the credit granted beyond demand (the prefetch
 * when it was granted), and in bytes at most {@link Backlog#limit} once past the first grant.
 *
 * <p>The prefetch follows the payloads' size: {@link StreamsOptions#prefetch()} payloads, but no
 * more than about {@value #PREFETCH_BYTES} bytes of them by their running average size (at least
 * one), and {@value #FIRST_PREFETCH} before a size is known; it shrinks at once and grows by
 * doubling, once per half prefetch of payloads (so a small first payload, a header before large
 * chunks, does not open it to 256 of them). So a slow subscriber of 8-byte payloads has 256
 * waiting, and one of 4 MiB payloads one, not a gigabyte. Credit counts payloads (RSocket's
 * REQUEST_N), so what was granted at one size may arrive at a larger one; the next grant shrinks,
 * and a payload that would take the queue past {@link Backlog#limit}, or what waits for readers on
 * the whole connection past its {@link UnreadBudget}, cancels the stream and fails the subscriber
 * with {@link BacklogExceededException}.
 *
 * <p>Ending. Completion and the peer's ERROR come after the payloads queued before them; a broken
 * or closed connection fails the subscriber at once (see {@link #onError(Stream, int, String)}).
 *
 * <p>Threading. Every signal to the subscriber comes from the connection's event loop. {@link
 * #request} and {@link #cancel} may come from any thread: off the loop they add to an atomic demand
 * and schedule one drain task (coalesced). The loop side keeps its state in plain fields.
 */
public abstract class InboundPublisher extends LoopDrain
    implements Publisher<Payload>, Subscription, StreamListener, UnreadBudget.Source {
  protected final boolean zeroCopy;

  /** The most payloads granted ahead of demand: {@link StreamsOptions#prefetch()}. */
  private final int maxPrefetch;

  /** About how many bytes of payloads are granted ahead of demand at most. */
  public static final long PREFETCH_BYTES = 1 << 20;

  /** The prefetch before a payload's size is known (when less than the configured one). */
  public static final int FIRST_PREFETCH = 16;

  /** The frame around a payload, added to its size: prefix, header, metadata length. */
  private static final long FRAMING = 12;

  // Field updaters, not atomic objects: a stream's reader is one object, not four.
  private volatile int subscribed;
  private volatile long requested;

  private static final AtomicIntegerFieldUpdater<InboundPublisher> SUBSCRIBED =
      AtomicIntegerFieldUpdater.newUpdater(InboundPublisher.class, "subscribed");
  private static final AtomicLongFieldUpdater<InboundPublisher> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(InboundPublisher.class, "requested");
  private static final AtomicIntegerFieldUpdater<InboundPublisher> START_GATE =
      AtomicIntegerFieldUpdater.newUpdater(InboundPublisher.class, "startGate");
  private volatile Subscriber<? super Payload> downstream;

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<InboundPublisher, Subscriber> DOWNSTREAM =
      AtomicReferenceFieldUpdater.newUpdater(
          InboundPublisher.class, Subscriber.class, "downstream");

  /**
   * Set once by whoever comes first: the first request (which starts) or a cancel (which never
   * does).
   */
  private volatile int startGate;

  private volatile boolean onSubscribeReturned;
  private volatile boolean cancelled;

  /**
   * What the subscriber is told as its cancelled stream is cleaned up: rule 3.9's error for a
   * request that was not positive, the exception its own onNext threw, or a {@link
   * BacklogExceededException}.
   */
  private volatile Throwable invalidRequest;

  private static final System.Logger LOG = System.getLogger(InboundPublisher.class.getName());
  private volatile Throwable startError;

  /** The stream once known; written by {@link #start} (any thread) or on the loop. */
  protected volatile Stream stream;

  /** Whether the peer was granted unbounded credit; written before the request is sent. */
  protected boolean unbounded;

  /**
   * Whether the first credit was granted: set with it, before the request is sent. Until then (and
   * for good on a channel responder whose requester had already completed, which grants none) no
   * REQUEST_N is sent from {@link #drain} and no payload size is tracked.
   */
  private boolean credited;

  // Event loop only.
  private boolean loopStarted;
  private ArrayDeque<Payload> queue;

  /**
   * The bytes of the payloads in {@link #queue} (metadata and data), each counted {@link
   * UnreadBudget#MESSAGE_OVERHEAD} more. Loop only.
   */
  private long queuedBytes;

  /** What waits here, to the connection's budget: once a payload has waited (null without one). */
  private QueueAccount account;

  /**
   * The first credit, granted before any payload's size was known: payloads within it may wait
   * whatever their size (a stream of large ones has that many waiting at first, by its own
   * request); those after it are held to {@link Backlog#limit} bytes waiting.
   */
  private long firstGrant;

  /** The largest payload this stream has queued, in bytes. Loop only. */
  private long largestSize;

  /**
   * Whether the subscriber {@link ReadsInPlace}: a payload emitted straight from the engine's
   * callback is then lent, not copied or retained. Written before {@link #downstream}.
   */
  private boolean lends;

  /** Whether the subscriber {@link ReadsBuffersInPlace} (then it {@link #lends} too). */
  private boolean readsBuffers;

  private long emitted;

  /** Credit granted to the peer and payloads received, in total (bounded credit only). */
  private long granted;

  private long arrived;

  /** Payloads granted ahead of demand (bounded credit), by {@link #averageSize}. Loop only. */
  private int prefetch;

  /** What {@link #prefetch} grows toward: the count the average size allows. Loop only. */
  private int targetPrefetch;

  /** {@link #arrived} when the prefetch last grew. Loop only. */
  private long grewAt;

  /** The least credit worth a REQUEST_N: three quarters of the prefetch. */
  private int limit;

  /** A running average of the received payloads' sizes; 0 until one has come. Loop only. */
  private long averageSize;

  /** The prefetch grew with the first size known: grant the difference even below the limit. */
  private boolean prefetchGrew;

  private boolean inboundDone;
  private Throwable terminal;
  private boolean finished;
  private boolean draining;
  private boolean missed;
  private boolean cancelPending;

  /**
   * The connection failed or closed under the stream: told at once, even to a subscriber that has
   * not asked for anything yet. Written on the loop.
   */
  private volatile boolean connectionLost;

  /**
   * The peer's ERROR ended the stream: told without demand once what came before it has been taken
   * (at once when nothing did). Written on the loop.
   */
  private volatile boolean peerFailed;

  protected InboundPublisher(EventExecutor loop, StreamsOptions options) {
    super(loop);
    this.zeroCopy = options.zeroCopy();
    this.maxPrefetch = options.prefetch();
    setPrefetch(Math.min(maxPrefetch, FIRST_PREFETCH));
  }

  private void setPrefetch(int n) {
    prefetch = n;
    limit = Math.max(1, n - (n >> 2));
  }

  /** Folds a received payload's size into the average and the prefetch. Loop, bounded credit. */
  private void sized(ByteBuf metadata, ByteBuf data) {
    long size = data.readableBytes() + (metadata == null ? 0 : metadata.readableBytes()) + FRAMING;
    long was = averageSize;
    long average = was == 0 ? size : was + (size - was) / 8;
    if (average == was && prefetch == targetPrefetch) {
      return; // payloads of a steady size (the common case): kept small, for the JIT to inline
    }
    resized(average, was == 0);
  }

  /** {@link #sized}'s rarer part: a new average, or a prefetch still growing. */
  private void resized(long average, boolean first) {
    if (average != averageSize) {
      averageSize = average;
      targetPrefetch = (int) Math.max(1, Math.min(maxPrefetch, PREFETCH_BYTES / average));
    }
    // Shrinking takes effect at once; growing doubles at most, once per half prefetch of payloads,
    // so a few small payloads (a header before large chunks) do not open it to its full count.
    int n;
    if (targetPrefetch < prefetch) {
      n = targetPrefetch;
    } else if (first || arrived - grewAt >= prefetch / 2) {
      n = Math.min(targetPrefetch, 2 * prefetch);
      grewAt = arrived;
    } else {
      return;
    }
    if (n != prefetch) {
      prefetchGrew = first && n > prefetch;
      setPrefetch(n);
    }
  }

  /**
   * The credit to open with: unbounded when the first demand is, else that demand and the prefetch.
   * Runs once, before the stream exists, on the thread that starts it.
   */
  protected final long initialCredit() {
    long r = requested;
    credited = true;
    unbounded = r == Long.MAX_VALUE;
    if (unbounded) {
      return Long.MAX_VALUE;
    }
    granted = r >= MAX_GRANT - prefetch ? MAX_GRANT : r + prefetch; // (no overflow)
    firstGrant = granted;
    return granted;
  }

  /** The most credit one REQUEST_N grants (the frame's field is 31 bits; this is less). */
  private static final long MAX_GRANT = Integer.MAX_VALUE - 1;

  /**
   * Tops the peer's credit up to the subscriber's unmet demand plus the prefetch, less what waits
   * here, when that adds at least {@link #limit}. Loop only, on a started stream with bounded
   * credit.
   */
  private void grantCredit(Stream s, long r) {
    long demand = Math.min(r - emitted, MAX_GRANT);
    long queued = queue == null ? 0 : queue.size();
    long outstanding = granted - arrived;
    long grant = Math.min(demand + prefetch - queued - outstanding, MAX_GRANT);
    if (grant >= limit || prefetchGrew && grant > 0) {
      prefetchGrew = false;
      granted += grant;
      s.request(grant);
    }
  }

  /**
   * Starts the stream on the first request: sends the request, or grants the first credit. Runs on
   * the requesting thread when {@link #startsOnCaller()}, else on the loop.
   */
  protected abstract void start();

  /** Whether {@link #start} runs on the thread of the first request (a connection hand-off). */
  protected boolean startsOnCaller() {
    return false;
  }

  /**
   * {@link #start} could not make the call ({@code error}: the connection refused it, its buffers
   * released): the subscriber gets it as onError. Any thread.
   */
  protected final void startFailed(Throwable error) {
    startError = error;
  }

  /** Cancelled or failed before {@link #start}: release what start would have sent. */
  protected void discard() {}

  /**
   * The subscriber cancelled after the start (on the loop), before the CANCEL is sent; {@code
   * inboundDone} when the peer had already ended its half (no CANCEL follows). A cancel after the
   * subscriber was told the end is a no-op (Reactive Streams rules 1.6 and 3.7).
   */
  protected void cancelled(boolean inboundDone) {}

  /** Whether a subscriber came. Any thread. */
  public final boolean isSubscribed() {
    return subscribed != 0;
  }

  // ------------------------------------------------------------------ Publisher, Subscription

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!SUBSCRIBED.compareAndSet(this, 0, 1)) {
      subscriber.onSubscribe(NoopSubscription.INSTANCE);
      subscriber.onError(
          new IllegalStateException(
              "this Publisher takes one subscriber: it is one call (make the call again)"));
      return;
    }
    lends = ReadsInPlace.check(subscriber);
    // Asked only of those: a subscriber of an application's is tested against one interface, not
    // two (a type check that fails scans all of its class's interfaces).
    readsBuffers = lends && subscriber instanceof ReadsBuffersInPlace;
    downstream = subscriber;
    subscriber.onSubscribe(this);
    // Rule 1.3: nothing may be signalled before onSubscribe returns, so a request made inside it
    // starts the stream only now.
    onSubscribeReturned = true;
    if (cancelled) {
      signal();
    } else if (requested > 0) {
      tryStart();
    } else if (connectionLost || peerFailed) {
      signal(); // the stream failed before this subscriber came: it hears so without asking
    }
  }

  private void tryStart() {
    if (onSubscribeReturned && START_GATE.compareAndSet(this, 0, 1)) {
      if (startsOnCaller()) {
        start();
      }
      signal();
    }
  }

  @Override
  public void request(long n) {
    if (cancelled) {
      return; // rule 3.6
    }
    if (n <= 0) {
      invalidRequest = new IllegalArgumentException("request-n must be positive (rule 3.9): " + n);
      cancelled = true;
      if (onSubscribeReturned) {
        signal();
      }
      return;
    }
    long r;
    long next;
    do {
      r = requested;
      if (r == Long.MAX_VALUE) {
        break;
      }
      next = r + n;
      if (next < 0) {
        next = Long.MAX_VALUE;
      }
    } while (!REQUESTED.compareAndSet(this, r, next));
    if (startGate == 0) {
      tryStart();
    } else {
      signal();
    }
  }

  @Override
  public void cancel() {
    if (cancelled) {
      return;
    }
    cancelled = true;
    if (onSubscribeReturned) {
      signal();
    }
  }

  /**
   * The loop is shutting down: the connection is gone and nothing will arrive. Off the loop,
   * perhaps on several threads at once. The subscriber hears it once the loop's thread has stopped
   * (its last tasks may still be signalling it), from whichever thread takes it first. (Millrace's
   * loops have unbounded task queues, as Netty's default is, so a refused task means the loop is
   * shutting down and its termination comes.)
   */
  @Override
  protected final void loopGone() {
    if (startsOnCaller() && START_GATE.compareAndSet(this, 0, 1)) {
      discard(); // never sent, and now never will be: release the request
    }
    loop.terminationFuture().addListener(f -> tellLoopGone());
  }

  private void tellLoopGone() {
    Subscriber<? super Payload> d = takeDownstream();
    if (d != null) {
      dropQueued(); // the loop's thread has stopped: what it left waiting is this thread's now
      Throwable invalid = invalidRequest;
      d.onError(
          invalid != null
              ? invalid // rule 3.9 wins over the reason the stream could not go on
              : StreamErrorException.received(
                  ErrorCode.CONNECTION_CLOSE, "the connection's loop is shut down"));
    }
  }

  /**
   * The subscriber, for its terminal signal: taken once, so that the loop's last tasks and a thread
   * that found the loop gone never both end it.
   */
  @SuppressWarnings("unchecked")
  private Subscriber<? super Payload> takeDownstream() {
    return (Subscriber<? super Payload>) DOWNSTREAM.getAndSet(this, null);
  }

  // ------------------------------------------------------------------ StreamListener (loop)

  @Override
  public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
    if (cancelled || finished) {
      return; // the engine releases the buffers
    }
    if (stream == null) {
      stream = s; // the caller thread has not stored it yet
    }
    arrived++;
    if (credited && !unbounded) {
      sized(metadata, data);
    }
    if (!draining && (queue == null || queue.isEmpty()) && canEmit(requested)) {
      draining = true;
      try {
        if (readsBuffers) {
          emitInPlace(s, metadata, data);
        } else {
          emit(
              s,
              lends ? Payload.lent(metadata, data) : Payloads.received(metadata, data, zeroCopy));
        }
      } finally {
        draining = false;
      }
      if (missed || cancelled) {
        drain();
      }
      return;
    }
    long size = sizeOf(metadata, data);
    if (size > largestSize) {
      largestSize = size;
    }
    long counted = size + UnreadBudget.MESSAGE_OVERHEAD;
    if (queuedBytes + counted > Backlog.limit(largestSize) && arrived > firstGrant) {
      overflowed(size, null); // the engine releases the buffers
      return;
    }
    QueueAccount account = this.account;
    if (account == null) {
      UnreadBudget budget = UnreadBudget.of(s);
      account = this.account = budget == null ? null : new QueueAccount(this, budget);
    }
    if (account != null && !account.budget.admitOnLoop(account, queuedBytes, size)) {
      overflowed(size, account.budget); // past the connection's limit
      return;
    }
    Payload p = Payloads.received(metadata, data, zeroCopy);
    if (queue == null) {
      queue = new ArrayDeque<>(Math.min(prefetch, 64));
    }
    queue.add(p);
    queuedBytes += counted;
    drain();
  }

  private static long sizeOf(ByteBuf metadata, ByteBuf data) {
    return data.readableBytes() + (metadata == null ? 0 : metadata.readableBytes());
  }

  /**
   * A payload of {@code size} bytes would take what waits here past {@link Backlog#limit}, or what
   * waits on the whole connection past the limit of its {@code budget} when that is not null: the
   * stream is cancelled as if the subscriber had cancelled it (CANCEL to the peer, what waits
   * dropped) and the subscriber is told so. Loop.
   */
  private void overflowed(long size, UnreadBudget budget) {
    if (LOG.isLoggable(System.Logger.Level.DEBUG)) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "{0} bytes wait for a slow subscriber ({1} on its connection): its stream is cancelled",
          queuedBytes,
          budget == null ? "-" : budget.charged());
    }
    if (invalidRequest == null) {
      invalidRequest =
          budget == null
              ? new BacklogExceededException(queuedBytes, size, Backlog.limit(largestSize))
              : BacklogExceededException.onConnection(budget.charged(), size, budget.limit());
    }
    cancelled = true;
    drain();
  }

  @Override
  public void onComplete(Stream s) {
    if (stream == null) {
      stream = s;
    }
    inboundDone = true;
    drain();
  }

  /**
   * The stream failed. The peer's ERROR ends the stream's content and comes after the payloads that
   * preceded it, without demand (a subscriber that has not asked still learns that its stream has
   * failed, once it has taken what came before); a connection-level failure (a connection-level
   * code, or the connection closed, broke or was disposed) is told at once, even without demand,
   * and what waits is dropped, as grpc-java does for a transport failure: a subscriber that has
   * stopped asking must still learn that its stream is gone.
   */
  @Override
  public void onError(Stream s, int errorCode, String message) {
    StreamErrorException e = StreamErrorException.received(errorCode, message);
    if (!inboundDone && (ErrorCode.isConnectionLevel(errorCode) || !s.connection().isOpen())) {
      dropQueued(); // (a stream the peer had already ended keeps what it sent)
      connectionLost = true;
    }
    if (!inboundDone) {
      peerFailed = true;
    }
    inboundEnded(e);
  }

  private void dropQueued() {
    if (queue != null) {
      for (Payload p; (p = queue.poll()) != null; ) {
        p.release();
      }
    }
    queuedBytes = 0;
    counted();
  }

  private Payload poll() {
    Payload p = queue.poll();
    // (as sizeOf counted it; data() would wrap a received copy)
    queuedBytes -= p.length() + UnreadBudget.MESSAGE_OVERHEAD;
    counted();
    return p;
  }

  /** Tells the connection's budget what waits here now. */
  private void counted() {
    QueueAccount a = account;
    if (a != null) {
      a.budget.update(a, queuedBytes); // (nothing off the loop: one that has shut down)
    }
  }

  /**
   * The prefetch queue as the connection's budget sees it: what waits in it while its publisher
   * lives. A publisher that its subscriber dropped without a cancel, on a stream the peer has
   * ended, is collected with what waits in it, and then nothing waits.
   */
  private static final class QueueAccount extends UnreadBudget.Account {
    final UnreadBudget budget;
    private final WeakReference<InboundPublisher> owner;

    QueueAccount(InboundPublisher owner, UnreadBudget budget) {
      this.owner = new WeakReference<>(owner);
      this.budget = budget;
    }

    @Override
    protected long waitingNow() {
      InboundPublisher p = owner.get();
      return p == null ? 0 : p.queuedBytes;
    }
  }

  /**
   * The budget of the connection this stream's payloads come from: for a subscriber that queues
   * them for a reader on another thread. Loop, once a payload has come.
   */
  @Override
  public UnreadBudget unreadBudget() {
    Stream s = stream;
    return s == null ? null : UnreadBudget.of(s);
  }

  /** Ends the inbound half with {@code error} (delivered after what is queued). Loop only. */
  protected final void inboundEnded(Throwable error) {
    if (inboundDone) {
      return;
    }
    inboundDone = true;
    terminal = error;
    drain();
  }

  private boolean canEmit(long r) {
    return r == Long.MAX_VALUE || emitted < r;
  }

  private void emit(Stream s, Payload p) {
    Subscriber<? super Payload> d = downstream;
    if (d == null) {
      p.release(); // ended meanwhile from another thread (the loop is shutting down)
      return;
    }
    emitted++;
    try {
      d.onNext(p);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      subscriberThrew(e);
      return;
    }
    afterEmit(s);
  }

  /**
   * The subscriber's onNext threw (rule 2.13 forbids it): the stream is cancelled, as if it had
   * cancelled, and the subscriber is told its own exception in onError, as Reactor's and RxJava's
   * subscribers are, so that its code learns that the stream has stopped. Loop, inside drain, which
   * ends the stream on seeing the cancel. (The errors caught are those a subscriber's bug throws:
   * an OutOfMemoryError or another VirtualMachineError goes on up.)
   */
  private void subscriberThrew(Throwable e) {
    LOG.log(
        System.Logger.Level.WARNING,
        "a subscriber's onNext threw (rule 2.13); its stream is cancelled and it is told",
        e);
    if (invalidRequest == null) {
      invalidRequest = e;
    }
    cancelled = true;
  }

  /** {@link #emit} for a {@link ReadsBuffersInPlace} subscriber: the engine's buffers, lent. */
  private void emitInPlace(Stream s, ByteBuf metadata, ByteBuf data) {
    Subscriber<? super Payload> d = downstream; // (not kept elsewhere: rule 3.13 lets it go)
    if (d == null) {
      return; // ended meanwhile from another thread; the engine releases the buffers
    }
    emitted++;
    try {
      ((ReadsBuffersInPlace) d).onNextInPlace(metadata, data);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      subscriberThrew(e); // an application's subscriber behind the one that reads in place
      return;
    }
    afterEmit(s);
  }

  private void afterEmit(Stream s) {
    if (credited && !unbounded && !inboundDone && !cancelled) {
      // Unbounded demand too: drain switches the stream to unbounded credit only once the request
      // is on the wire, and until then the grant (capped) keeps the peer going.
      grantCredit(s, requested);
    }
  }

  /** Delivers what demand allows, the end, or the cancellation. Loop only; not reentrant. */
  @Override
  protected final void drain() {
    if (draining) {
      missed = true;
      return;
    }
    draining = true;
    try {
      do {
        missed = false;
        if (finished) {
          Stream pending = stream;
          if (cancelPending && pending != null) {
            cancelPending = false; // cancelled while the caller was still making the request
            pending.cancel();
          }
          return;
        }
        Throwable failedStart = startError;
        if (failedStart != null && !inboundDone) {
          inboundDone = true;
          terminal = failedStart;
        }
        if (cancelled) {
          cleanUp();
          return;
        }
        if (startGate != 0 && !loopStarted) {
          loopStarted = true;
          if (!startsOnCaller()) {
            start();
          }
        }
        Stream s = stream;
        long r = requested;
        while (queue != null && !queue.isEmpty() && canEmit(r)) {
          emit(s, poll());
          if (cancelled) {
            cleanUp();
            return;
          }
          r = requested;
        }
        boolean empty = queue == null || queue.isEmpty();
        if (empty
            && inboundDone
            && (loopStarted
                || (connectionLost || peerFailed) && onSubscribeReturned && downstream != null)) {
          finished = true;
          Subscriber<? super Payload> d = takeDownstream();
          if (d == null) {
            return; // told already: the loop shut down and another thread told it
          }
          if (terminal == null) {
            d.onComplete();
          } else {
            d.onError(terminal);
          }
          return;
        }
        if (credited && !unbounded && !inboundDone && s != null && s.streamId() != 0) {
          if (r != Long.MAX_VALUE) {
            grantCredit(s, r); // the subscriber may have asked for more
          } else if (empty) {
            s.request(Long.MAX_VALUE); // the subscriber takes everything: no more REQUEST_N
            unbounded = true;
          }
        }
      } while (missed);
    } finally {
      draining = false;
    }
  }

  /** The subscriber cancelled or asked for a negative amount: stop the stream, drop the queue. */
  private void cleanUp() {
    finished = true;
    dropQueued();
    queue = null;
    if (START_GATE.compareAndSet(this, 0, 1) || !loopStarted && !startsOnCaller()) {
      discard(); // never started, and now never will
    } else {
      cancelled(inboundDone);
      Stream s = stream;
      if (!inboundDone) {
        if (s != null) {
          s.cancel();
        } else {
          cancelPending = true; // the caller is making the request: cancel it once it has
        }
      }
    }
    Subscriber<? super Payload> d = takeDownstream();
    Throwable invalid = invalidRequest;
    if (invalid != null && d != null) {
      d.onError(invalid);
    }
  }
}
