package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.millrace.streams.Payload;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.reactivestreams.Subscription;

/**
 * Sends the answer of a request-response this side serves: the Subscriber that the handler's
 * Publisher is subscribed with, and the engine's listener of the stream.
 *
 * <p>Why not an {@link OutboundSink}: that carries a stream's state (a queue made on demand, the
 * Publisher's demand against the peer's credit, counts of what was asked and sent) for a call that
 * sends one payload. This one holds at most that payload.
 *
 * <p>What it does. It asks the Publisher for one payload once the stream can take it (writable, its
 * turn), and sends it with the completion in one frame; a Publisher that completes without one
 * completes the stream empty, one that fails fails it (APPLICATION_ERROR). After the answer it asks
 * for one more: a Mono completes by itself, and must not see a cancel (its doFinally would report
 * one for every success), while a second payload shows the Publisher is no single answer: it is
 * released and the Publisher cancelled. The peer's CANCEL, an error on the stream or the connection
 * lost cancel the Publisher and release an answer not yet sent.
 *
 * <p>Threading. The Publisher may signal on any thread. On the event loop, with the stream ready,
 * the answer goes out at once; from another thread (or while the stream is not ready) it waits in
 * one field until the loop sends it (one task).
 */
public final class AnswerSink extends StoppingSink {
  private static final System.Logger LOG = System.getLogger(AnswerSink.class.getName());

  private static final VarHandle WAITING;
  private static final VarHandle LOOP_GONE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      WAITING = lookup.findVarHandle(AnswerSink.class, "waiting", Payload.class);
      LOOP_GONE = lookup.findVarHandle(AnswerSink.class, "loopGone", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Stream stream;

  private volatile Subscription upstream;

  /**
   * The answer, emitted and not yet sent; taken once (sent or released) through {@link #WAITING}.
   */
  @SuppressWarnings("unused") // through WAITING
  private volatile Payload waiting;

  private volatile Throwable upstreamError;
  private volatile boolean upstreamDone;

  /** Whether a payload came (onNext is serial: rule 1.3); a second one is {@link #extra}. */
  private volatile boolean received;

  private volatile boolean extra;

  @SuppressWarnings("unused") // through LOOP_GONE
  private volatile boolean loopGone;

  /**
   * Set by a thread that found the loop gone, before it releases the answer waiting: a drain in the
   * loop's last tasks that reads it then does not finish the call (it may have no answer left).
   */
  private volatile boolean foundGone;

  // Event loop only.
  private boolean asked;
  private boolean sent;
  private boolean askedPastAnswer;
  private boolean finished;
  private boolean upstreamCancelled;
  private boolean draining;
  private boolean missed;

  public AnswerSink(Stream stream) {
    super(stream.connection().executor());
    this.stream = stream;
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
  public void onNext(Payload p) {
    if (p == null) {
      throw new NullPointerException("payload"); // rule 2.13
    }
    if (received) {
      p.release(); // no single answer: drain cancels the Publisher
      extra = true;
      signal();
      return;
    }
    received = true;
    // On the loop, with the stream ready, the answer goes straight out, also while drain() is
    // asking for it (a synchronous Publisher emits inside that request).
    if (loop.inEventLoop() && !finished && stream.isReady()) {
      send(p);
      drain(); // ask past the answer (or mark the running drain to)
      return;
    }
    waiting = p;
    signal();
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
   * loop, for every signal from then on.
   */
  @Override
  protected void loopGone() {
    foundGone = true;
    Subscription s = upstream;
    try {
      // Once, whichever thread comes first (rule 2.7); not a Publisher that has ended (a drain in
      // the loop's last tasks may have sent its answer before the loop was found gone).
      if (s != null && !upstreamDone && LOOP_GONE.compareAndSet(this, false, true)) {
        s.cancel();
      }
    } finally {
      releaseWaiting(); // even past a cancel that throws (rule 3.15)
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
   * Sends the answer, which a request-response's stream completes with in the same frame (the
   * engine may fail the stream, and call back, at once). A payload that cannot even be handed over
   * (a lent one whose buffers are gone, an encoder's error thrown here) fails the stream instead:
   * the caller hears of it, and the Publisher is cancelled, not told.
   */
  private void send(Payload p) {
    sent = true;
    if (!Payloads.sendOrFail(p, stream)) {
      stop();
    }
  }

  /** Sends the answer once it may go, ends the stream, asks the Publisher. Loop only. */
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
        if (finished) {
          cancelUpstream(); // it may have come after the stream ended
          releaseWaiting();
          return;
        }
        // Read before the answer: the Publisher stores its answer and then its end, so an end seen
        // here comes with the answer it followed (read the other way round, an answer stored
        // between the two reads would be taken for an empty completion).
        boolean done = upstreamDone;
        if (foundGone) {
          return; // a thread that found the loop gone cancelled and released: the loop is going
        }
        if (!sent && (Payload) WAITING.getVolatile(this) != null) {
          if (!stream.isReady()) {
            return; // not writable, or not its turn: onReady comes back
          }
          Payload p = (Payload) WAITING.getAndSet(this, null);
          if (p == null) {
            return; // released meanwhile by a thread that found the loop gone
          }
          send(p);
          if (finished) {
            return; // the send failed the stream, and stop() cleaned up
          }
        }
        if (sent) {
          afterAnswer(); // (it may signal back: missed, and round again)
          if (finished) {
            return;
          }
          continue;
        }
        if (done) {
          if (foundGone) {
            return; // found gone meanwhile: its answer may have been released, not sent
          }
          finish(upstreamError);
          return;
        }
        Subscription up = upstream;
        if (up != null && !asked && !upstreamDone && stream.isReady()) {
          asked = true;
          up.request(1);
        }
      } while (missed);
    } finally {
      draining = false;
    }
  }

  /**
   * The answer went out: a Publisher that ended is done with; one that sent more is stopped; else
   * it is asked for one more, which a Mono answers by completing.
   */
  private void afterAnswer() {
    if (extra) {
      stop(); // cancels it
    } else if (upstreamDone) {
      finished = true;
      upstreamCancelled = true; // it ended by itself
    } else if (!askedPastAnswer) {
      askedPastAnswer = true;
      upstream.request(1);
    }
  }

  private void finish(Throwable error) {
    finished = true;
    upstreamCancelled = true; // it ended by itself
    if (error == null) {
      stream.complete();
    } else {
      if (LOG.isLoggable(Level.DEBUG)) {
        LOG.log(Level.DEBUG, "stream " + stream.streamId() + " fails: " + error, error);
      }
      stream.fail(error);
    }
  }

  /**
   * The stream's outbound half ended from elsewhere (cancel, error, connection lost), the answer
   * could not be sent, or the Publisher sent a second payload: cancel it, release what waits. Loop.
   */
  private void stop() {
    if (finished) {
      return;
    }
    finished = true;
    markStopped();
  }

  @Override
  protected final void onStopped() {
    cancelUpstream();
    releaseWaiting();
  }

  private void cancelUpstream() {
    Subscription up = upstream;
    if (up != null && !upstreamCancelled) {
      upstreamCancelled = true;
      up.cancel();
    }
  }

  private void releaseWaiting() {
    Payload p = (Payload) WAITING.getAndSet(this, null);
    if (p != null) {
      p.release();
    }
  }
}
