package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;

/**
 * The producers of one connection that were told to wait ({@link io.millrace.core.Stream#isReady()}
 * said false): because the transport is full, or because this turn's writes are used up. They get
 * {@code onReady} first come, first served, when the transport drains or after the loop next polls
 * its sockets ({@link IoYield}), until it fills again or the new turn is used up; those still
 * waiting keep their place, and one that has to wait again goes to the back. No producer starves
 * behind the first ones, and no connection's producers keep the loop from its other connections.
 *
 * <p>A stream is queued at most once ({@link DefaultStream#WAITING}); one that ends while waiting
 * just loses the flag and is skipped when its turn comes, so removal is O(1) and the stream object
 * keeps its size. The deque is created at the first wait, so idle connections do not carry it, and
 * reuses its array afterwards. Event loop only.
 */
final class Producers {
  private final ConnectionEngine engine;
  private final EventExecutor executor;
  private final Transport transport;
  private final Flusher flusher;
  private final Runnable nextTurn = this::nextTurn;
  private ArrayDeque<DefaultStream> waiting;
  private boolean nextTurnScheduled;

  Producers(ConnectionEngine engine, EventExecutor executor, Transport transport, Flusher flusher) {
    this.engine = engine;
    this.executor = executor;
    this.transport = transport;
    this.flusher = flusher;
  }

  /** {@code stream}'s producer found the transport full: it gets onReady when it drains. */
  void awaitWritable(DefaultStream stream) {
    add(stream);
  }

  /** {@code stream}'s producer used up this turn: it gets onReady after the loop's next poll. */
  void awaitTurn(DefaultStream stream) {
    add(stream);
    scheduleNextTurn();
  }

  private void scheduleNextTurn() {
    if (!nextTurnScheduled) {
      // After the loop's next poll, not as the next task (see IoYield); none on a loop that is
      // shutting down, where the connection's close fails the producers still waiting.
      nextTurnScheduled = true;
      if (!IoYield.afterIo(executor, nextTurn, false)) {
        nextTurnScheduled = false;
      }
    }
  }

  /**
   * The transport is writable again: the waiting producers go on within this turn. It is not a new
   * turn: writability can come back inside a task (a flush, the in-JVM transport's reader), and a
   * turn begins only after the loop has polled its sockets.
   */
  void writable() {
    wake();
  }

  /** {@code stream} no longer waits (it ended). */
  void remove(DefaultStream stream) {
    if (stream.has(DefaultStream.WAITING)) {
      stream.clear(DefaultStream.WAITING);
    }
  }

  private void nextTurn() {
    nextTurnScheduled = false;
    if (engine.isOpen()) {
      flusher.newTurn();
      wake();
    }
  }

  private void wake() {
    DefaultStream stream;
    while (transport.isWritable() && !flusher.turnUsedUp() && (stream = poll()) != null) {
      stream.notifyReady();
    }
    if (flusher.turnUsedUp() && waiting != null && !waiting.isEmpty()) {
      scheduleNextTurn(); // those still waiting go on in the next turn
    }
  }

  private void add(DefaultStream stream) {
    if (stream.has(DefaultStream.WAITING)) {
      return;
    }
    stream.set(DefaultStream.WAITING);
    if (waiting == null) {
      waiting = new ArrayDeque<>();
    }
    waiting.add(stream);
  }

  /** The next stream still waiting, or null. */
  private DefaultStream poll() {
    ArrayDeque<DefaultStream> q = waiting;
    if (q == null) {
      return null;
    }
    DefaultStream stream;
    while ((stream = q.poll()) != null) {
      if (stream.has(DefaultStream.WAITING)) {
        stream.clear(DefaultStream.WAITING);
        return stream;
      }
    }
    return null;
  }
}
