package io.millrace.streams.internal;

import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * A responder's sink whose stop can be told to one hook: the stop state that {@link
 * ResponderSink#isStopped} reads, and the hook a handler method running on the handler executor
 * sets through {@link io.millrace.streams.ReactiveResponder#onCancelWhileHandling}, so that the
 * peer's CANCEL reaches it while the method still runs, before its answer is subscribed.
 *
 * <p>One field holds both: null while running, the hook while running with one set, {@link
 * #STOPPED} once stopped. Setting and clearing the hook (the handler's thread) race the stop (the
 * loop) through compare-and-set, so the hook runs once or not at all.
 */
public abstract class StoppingSink extends LoopDrain implements ResponderSink {
  private static final System.Logger LOG = System.getLogger(StoppingSink.class.getName());

  private static final Object STOPPED = new Object();

  private volatile Object stopState;

  private static final AtomicReferenceFieldUpdater<StoppingSink, Object> STOP_STATE =
      AtomicReferenceFieldUpdater.newUpdater(StoppingSink.class, Object.class, "stopState");

  protected StoppingSink(EventExecutor loop) {
    super(loop);
  }

  @Override
  public final boolean isStopped() {
    return stopState == STOPPED;
  }

  /**
   * Marks the sink stopped, then lets it {@linkplain #onStopped let go} of its Publisher and what
   * waits, then runs the hook set, if any, even if letting go throws (a Publisher's cancel that
   * breaks rule 3.15): the sink reads as stopped from the start, and the hook is told in any case.
   * Once per sink (the sink's own end state guards it); loop only.
   */
  protected final void markStopped() {
    Object was = STOP_STATE.getAndSet(this, STOPPED);
    try {
      onStopped();
    } finally {
      if (was instanceof Runnable hook) {
        run(hook);
      }
    }
  }

  /** Cancels the Publisher and releases what waits: the sink's part of {@link #markStopped}. */
  protected abstract void onStopped();

  /**
   * Runs {@code hook} when the sink stops, or here at once when it has. One hook at a time: a
   * second replaces the first.
   */
  public final void onStop(Runnable hook) {
    Object state;
    do {
      state = stopState;
      if (state == STOPPED) {
        run(hook);
        return;
      }
    } while (!STOP_STATE.compareAndSet(this, state, hook));
  }

  /** Takes {@code hook} off, if it is the one set and has not run. */
  public final void removeOnStop(Runnable hook) {
    STOP_STATE.compareAndSet(this, hook, null);
  }

  /**
   * Takes off whatever hook is set and has not run: the handler method that set it has returned.
   */
  public final void clearOnStop() {
    Object state = stopState;
    if (state instanceof Runnable) {
      STOP_STATE.compareAndSet(this, state, null);
    }
  }

  /** Whether the calling thread is the sink's event loop. */
  public final boolean onItsLoop() {
    return loop.inEventLoop();
  }

  private static void run(Runnable hook) {
    try {
      hook.run();
    } catch (RuntimeException e) { // the loop and the stop go on
      LOG.log(Level.WARNING, "a cancel hook failed", e);
    }
  }
}
