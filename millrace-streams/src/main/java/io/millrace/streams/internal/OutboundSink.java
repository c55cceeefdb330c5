package io.millrace.streams.internal;

import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Failures;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.lang.System.Logger.Level;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;

/**
 * Sends what a Publisher emits on one stream: the Subscriber that a responder's stream or channel
 * answer, or a requester's channel payloads, are subscribed with (a request-response's answer has
 * an {@link AnswerSink}).
 *
 * <p>Backpressure end to end: it asks its Publisher for no more than the peer's credit allows (at
 * most {@code prefetch} ahead, at least {@link ReadAhead#MAX_AHEAD} while it emits from another
 * thread, and at most about a mebibyte of payloads by their sampled average size, {@value
 * SizeWindow#UNSAMPLED} before a size is known) and nothing while the transport is not writable, so
 * what waits here is bounded by what it asked for: a stream of 4 MiB payloads to a slow reader
 * holds a few of them, not {@code prefetch}. It asks again when the peer grants credit or the
 * transport drains ({@link StreamListener#onReady}), in batches of at least a quarter of the
 * window.
 *
 * <p>Threading. The Publisher may emit on any thread. On the event loop a payload goes straight to
 * the stream when nothing waits before it; from other threads payloads wait in a queue that one
 * loop task (coalesced) drains, so a burst costs one wake-up.
 *
 * <p>The queue is an array-backed one with one consumer at a time: a producer pays one atomic
 * operation and no node per item, and an encoded value without metadata waits as itself, with no
 * payload made for it (a blocking handler's stream of messages: 56 bytes and three atomic
 * operations less per message than a linked queue of payloads). The consumer is the loop, except
 * once the loop has shut down, when whichever thread finds it so releases what waits: the two take
 * turns through {@link #takeTurn}, once per drain, not per item.
 */
public class OutboundSink extends StoppingSink implements TakesEncoded {
  private static final System.Logger LOG = System.getLogger(OutboundSink.class.getName());

  private final long prefetch;

  /**
   * Slots per array of the queue (4 or 8 bytes each): a new array per this many items, so that a
   * sink that queues a few items makes a small one.
   */
  private static final int QUEUE_CHUNK = 64;

  /**
   * What waits: payloads, and values of {@link #valueEncoder} queued as themselves. Made on the
   * first item that cannot go straight out (from another thread, or without credit), so that a
   * stream whose payloads all go straight out never makes one. Many producers (over time), one
   * consumer at a time ({@link #takeTurn}).
   */
  private volatile Queue<Object> queue;

  /**
   * The encoder of the values that wait as themselves: the first one an encoded item without
   * metadata came with (an item with another encoder waits as a payload). Set once, by
   * compare-and-set, before the first such value is queued: a Publisher that breaks rule 1.3 and
   * emits from two threads at once cannot have one thread's value encoded with the other's encoder.
   */
  private volatile PayloadEncoder<Object> valueEncoder;

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<OutboundSink, PayloadEncoder> VALUE_ENCODER =
      AtomicReferenceFieldUpdater.newUpdater(
          OutboundSink.class, PayloadEncoder.class, "valueEncoder");

  /** 1 while a consumer takes from the queue. */
  private volatile int consuming;

  /**
   * Set once everything that waits, and all that comes later, is to be released rather than sent:
   * the sink has stopped, or its loop has gone. The loop's turn stops sending then, and a consumer
   * that ends its turn releases what a release that found the queue busy left behind (a release
   * inside the loop's own turn, a write that stopped the sink, is one).
   */
  private volatile boolean releasing;

  private static final AtomicIntegerFieldUpdater<OutboundSink> CONSUMING =
      AtomicIntegerFieldUpdater.newUpdater(OutboundSink.class, "consuming");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<OutboundSink, Queue> QUEUE =
      AtomicReferenceFieldUpdater.newUpdater(OutboundSink.class, Queue.class, "queue");

  private volatile Subscription upstream;
  private volatile boolean upstreamDone;
  private volatile Throwable upstreamError;
  private volatile int loopGone;

  private static final AtomicIntegerFieldUpdater<OutboundSink> LOOP_GONE =
      AtomicIntegerFieldUpdater.newUpdater(OutboundSink.class, "loopGone");

  /** The stream written to; null until bound (a requester channel binds on its first payload). */
  protected Stream stream;

  // Event loop only.
  private long requestedUp;
  private long sent;
  private boolean finished;

  /** Running average size of the sampled payloads, framing included; 0 until one is sampled. */
  private long averageSize;

  private boolean upstreamCancelled;
  private boolean draining;
  private boolean missed;

  /**
   * Whether the Publisher's last payload came from a thread other than the loop: its window is then
   * at least {@link ReadAhead#MAX_AHEAD} (written by the Publisher's thread before the payload it
   * queues, read by the loop after taking one; a payload on the loop sets it back).
   */
  private boolean offLoop;

  public OutboundSink(EventExecutor loop, Stream stream, long prefetch) {
    super(loop);
    this.stream = stream;
    this.prefetch = prefetch;
  }

  // ------------------------------------------------------------------ Subscriber (any thread)

  @Override
  public void onSubscribe(Subscription s) {
    if (s == null) {
      throw new NullPointerException("subscription"); // rule 2.13
    }
    if (upstream != null) {
      s.cancel(); // rule 2.5
      return;
    }
    upstream = s;
    signal();
  }

  @Override
  public final void onNext(Payload p) { // final: onNextEncoded's items do not pass here
    if (p == null) {
      throw new NullPointerException("payload"); // rule 2.13
    }
    boolean onLoop = loop.inEventLoop();
    if (offLoop == onLoop) {
      offLoop = !onLoop; // where the payloads come from now decides the window (want())
    }
    // On the loop, with nothing waiting before it, a payload goes straight out, also while drain()
    // is asking the Publisher for more (a synchronous Publisher emits inside that request): drain
    // then sees "missed" and asks again once the request returns, one batch at a time.
    if (onLoop && queueEmpty() && !finished && canWrite()) {
      write(p);
      drain(); // ask for more (or mark the running drain to)
      return;
    }
    queue().offer(p);
    signal();
  }

  /**
   * {@link #onNext} of an encoded payload, with no payload made when it goes straight out: the
   * value goes to the stream's {@link Stream#next(ByteBuf, Object, PayloadEncoder)} as it would
   * from the payload.
   */
  @Override
  public <T> void onNextEncoded(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    if (value == null || encoder == null) {
      if (metadata != null) {
        metadata.release();
      }
      throw new NullPointerException(value == null ? "value" : "encoder"); // rule 2.13
    }
    Stream s;
    if (loop.inEventLoop() && (s = stream) != null && queueEmpty() && !finished && s.isReady()) {
      if (offLoop) {
        offLoop = false; // the payloads come from the loop now (see onNext)
      }
      if (SizeWindow.samples(sent)) {
        sample(metadata, value, encoder);
      }
      sent++;
      try {
        s.next(metadata, value, encoder);
      } catch (Throwable e) {
        Failures.throwIfFatal(e);
        Payloads.failUnsent(s, e);
      }
      afterWrite(s);
      drain();
      return;
    }
    if (metadata != null || stream == null || value instanceof Payload || !waitsAsItself(encoder)) {
      onNext(Payload.encoded(metadata, value, encoder)); // to be queued, or to open the stream
      return;
    }
    boolean onLoop = loop.inEventLoop();
    if (offLoop == onLoop) {
      offLoop = !onLoop; // (as in onNext)
    }
    queue().offer(value); // (unbounded but for 2^30 items: more than any window asks for)
    signal();
  }

  /** Whether a value of {@code encoder} may wait as itself (the producer's thread). */
  private boolean waitsAsItself(PayloadEncoder<?> encoder) {
    PayloadEncoder<Object> e = valueEncoder;
    if (e == null) {
      return VALUE_ENCODER.compareAndSet(this, null, encoder) || valueEncoder == encoder;
    }
    return e == encoder;
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable"); // rule 2.13
    }
    upstreamError = t;
    upstreamDone = true;
    signal();
  }

  @Override
  public void onComplete() {
    upstreamDone = true;
    signal();
  }

  /**
   * The connection is gone with its loop: stop the Publisher and release what it sent. Off the
   * loop, for every signal from then on (cancel is idempotent, the queue thread-safe).
   */
  @Override
  protected final void loopGone() {
    Subscription s = upstream;
    try {
      // Once, whichever thread comes first (rule 2.7); not a Publisher that has ended (a drain in
      // the loop's last tasks may have finished its stream before the loop was found gone).
      if (s != null && !upstreamDone && LOOP_GONE.compareAndSet(this, 0, 1)) {
        s.cancel();
      }
    } finally {
      releaseQueued(); // even past a cancel that throws (rule 3.15)
    }
  }

  // ------------------------------------------------------------------ StreamListener (loop)

  @Override
  public void onReady(Stream s) {
    drain();
  }

  @Override
  public void onCancel(Stream s) {
    stop();
  }

  @Override
  public void onError(Stream s, int errorCode, String message) {
    stop();
  }

  // ------------------------------------------------------------------ the loop's side

  /**
   * The stream is not bound yet and a payload is ready: a requester channel opens the stream with
   * it (ownership taken).
   */
  protected void open(Payload first) {
    throw new IllegalStateException("no stream to send on");
  }

  /**
   * The Publisher ended before the stream was bound (a requester channel without a first payload).
   */
  protected void endedUnopened(Throwable error) {}

  private boolean canWrite() {
    Stream s = stream;
    return s == null || s.isReady();
  }

  /**
   * Hands {@code p} to the engine, or fails the stream (as {@link Payloads#sendOrFail} does,
   * written out here: every payload of a stream passes this way, often below a deep chain of the
   * library's operators, and one call level less lets the JIT inline the engine's frame writing
   * into it).
   */
  private void write(Payload p) {
    if (SizeWindow.samples(sent)) {
      sample(p);
    }
    sent++;
    Stream s = stream;
    if (s == null) {
      open(p);
      return;
    }
    try {
      p.sendOn(s);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      Payloads.failUnsent(s, e);
    }
    afterWrite(s);
  }

  /** {@link #write(Payload)} of an item that waited: a payload, or a value of the value encoder. */
  private void writeItem(Object item) {
    if (item instanceof Payload p) {
      write(p);
      return;
    }
    PayloadEncoder<Object> encoder = valueEncoder;
    if (SizeWindow.samples(sent)) {
      sample(null, item, encoder);
    }
    sent++;
    Stream s = stream;
    if (s == null) {
      open(Payload.encoded(null, item, encoder));
      return;
    }
    try {
      s.next(null, item, encoder);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      Payloads.failUnsent(s, e);
    }
    afterWrite(s);
  }

  /** After a payload was handed to {@code s}, or failed to be. */
  private void afterWrite(Stream s) {
    if (s.isOutboundDone() && !finished) {
      // The write failed the stream, and nothing told this sink: it failed here, or the engine
      // failed it while the responder's handler runs inside the request's dispatch, when the
      // stream has no listener yet. Stop the Publisher, release what waits, and say so.
      stop();
      failedOnWrite(s);
    }
  }

  /**
   * A write failed the stream without the engine telling this sink's listener ({@link #afterWrite},
   * after a payload or an encoded item); the sink has stopped. Loop only.
   */
  protected void failedOnWrite(Stream s) {}

  /** Sends what waits, ends the stream when the Publisher has, and asks for more. Loop only. */
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
        if (releasing && !finished) {
          stoppedForLoopGone(); // found gone as it runs: what waited was released, not sent
        }
        if (finished) {
          cancelUpstream(); // it may have come after the stream ended
          releaseQueued();
          return;
        }
        // Taken off the queue before the engine owns it: a write that fails the stream stops the
        // sink, and the end of the turn releases what is still queued.
        if (!queueEmpty() && canWrite()) {
          sendWaiting();
        }
        if (finished) {
          continue; // a write ended the stream; a missed signal goes round to the cleanup
        }
        if (upstreamDone && queueEmpty()) {
          if (releasing) { // (set before a release takes anything: emptied by one, not by sending)
            stoppedForLoopGone();
            return;
          }
          finish(upstreamError);
          return;
        }
        Subscription up = upstream;
        if (up != null && !upstreamDone) {
          long want = want();
          if (want > 0) {
            requestedUp += want;
            up.request(want);
          }
        }
      } while (missed);
    } finally {
      draining = false;
    }
  }

  /**
   * Writes what waits while the stream takes it, in one consumer's turn; a write that stops the
   * sink ends the turn, which then releases the rest. Loop only.
   */
  private void sendWaiting() {
    if (!takeTurn()) {
      return; // only once the loop has gone: the thread that found it so releases what waits
    }
    try {
      Queue<Object> q = queue;
      Object item;
      while (!finished && !releasing && canWrite() && (item = q.poll()) != null) {
        writeItem(item);
      }
    } finally {
      endTurn();
    }
  }

  /**
   * Stops the sink whose loop a thread found gone while the loop still ran its last tasks: what
   * waited was released, so the stream must not complete; a stream never opened tells its channel
   * it ended. Loop only.
   */
  private void stoppedForLoopGone() {
    if (loopGone != 0 || upstreamDone) {
      upstreamCancelled = true; // cancelled by loopGone already, or ended by itself
    }
    stop();
    if (stream == null) {
      endedUnopened(
          StreamErrorException.received(
              ErrorCode.CONNECTION_CLOSE, "the connection's loop is shut down"));
    }
  }

  /** How many payloads to ask the Publisher for now: 0 to wait. */
  private long want() {
    long inFlight = requestedUp - sent;
    Stream s = stream;
    if (s == null) {
      return inFlight == 0 && sent == 0 ? 1 : 0; // the payload that opens the stream
    }
    if (!s.isReady()) {
      return 0; // no credit or not writable: onReady comes back
    }
    // A Publisher that emits on another thread (a blocking handler's sink, publishOn, an iterable
    // pulled on an executor) pays a wake-up of that thread per refill, which on a core shared with
    // the loop is two context switches: it gets the deeper window a blocking reader keeps ahead
    // (benchmarks.md, forty-sixth session). Memory stays bounded by the size window and credit.
    long ahead = offLoop ? Math.max(prefetch, ReadAhead.MAX_AHEAD) : prefetch;
    long window = Math.min(s.credit(), Math.min(ahead, SizeWindow.count(averageSize)));
    long want = window - inFlight;
    return want > 0 && (inFlight == 0 || want >= Math.max(1, window >> 2)) ? want : 0;
  }

  /**
   * Counts {@code p}'s size into the running average. An encoder that fails to give a length is not
   * sampled here: it fails again, and is dealt with, where the payload is sent.
   */
  private void sample(Payload p) {
    try {
      sample(p.length());
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // not sampled
    }
  }

  private <T> void sample(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    try {
      sample((metadata == null ? 0 : metadata.readableBytes()) + encoder.length(value));
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // not sampled (as above)
    }
  }

  private void sample(int size) {
    averageSize = SizeWindow.sampled(averageSize, size);
  }

  private void finish(Throwable error) {
    finished = true;
    upstreamCancelled = true; // it ended by itself
    Stream s = stream;
    if (s == null) {
      endedUnopened(error);
      return;
    }
    if (error == null) {
      s.complete();
    } else {
      if (LOG.isLoggable(Level.DEBUG)) {
        LOG.log(Level.DEBUG, "stream " + s.streamId() + " fails: " + error, error);
      }
      s.fail(error);
    }
    finished(s, error);
  }

  /**
   * The Publisher ended and the stream was told: completed, or failed with {@code error} (which
   * ends the whole stream). Loop only.
   */
  protected void finished(Stream s, Throwable error) {}

  /**
   * The stream's outbound half ended from elsewhere (cancel, error, connection lost) or under a
   * failed write: cancel the Publisher, release what waits. Loop only.
   */
  protected final void stop() {
    if (finished) {
      return;
    }
    finished = true;
    markStopped();
  }

  @Override
  protected final void onStopped() {
    cancelUpstream();
    releaseQueued();
  }

  private void cancelUpstream() {
    Subscription up = upstream;
    if (up != null && !upstreamCancelled) {
      upstreamCancelled = true;
      up.cancel();
    }
  }

  private boolean queueEmpty() {
    Queue<Object> q = queue;
    return q == null || q.isEmpty();
  }

  @SuppressWarnings("unchecked")
  private Queue<Object> queue() {
    Queue<Object> q = queue;
    if (q == null) {
      q = PlatformDependent.newMpscQueue(QUEUE_CHUNK, 1 << 30);
      if (!QUEUE.compareAndSet(this, null, q)) {
        q = queue; // another thread made it first
      }
    }
    return q;
  }

  /** Takes the consumer's turn, if no other consumer has it. */
  private boolean takeTurn() {
    return consuming == 0 && CONSUMING.compareAndSet(this, 0, 1);
  }

  /** Ends a consumer's turn, and releases what waits if a release found the queue busy. */
  private void endTurn() {
    consuming = 0;
    if (releasing) {
      releaseWaiting(); // (its check of the flag and this one's of the turn: one of them sees it)
    }
  }

  /**
   * Releases what waits, and from then on every item a consumer finds: on the loop when the sink
   * stops, on any thread once the loop has gone (then for every signal, so it also releases what
   * later signals leave).
   */
  private void releaseQueued() {
    releasing = true;
    releaseWaiting();
  }

  private void releaseWaiting() {
    Queue<Object> q = queue;
    if (q == null) {
      return;
    }
    // A consumer that has the turn (the loop, perhaps this very thread in a write that stopped the
    // sink) releases the rest when it ends it: it reads the flag after.
    while (!q.isEmpty() && takeTurn()) {
      try {
        releaseAll(q);
      } finally {
        consuming = 0;
      }
    }
  }

  private static void releaseAll(Queue<Object> q) {
    for (Object item; (item = q.poll()) != null; ) {
      if (item instanceof Payload p) { // (a value waiting as itself holds no buffer)
        try {
          p.release();
        } catch (RuntimeException e) { // released already (by its Publisher): the rest still goes
          LOG.log(Level.DEBUG, "a waiting payload would not release", e);
        }
      }
    }
  }
}
