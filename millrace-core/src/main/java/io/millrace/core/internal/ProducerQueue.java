package io.millrace.core.internal;

import java.util.ArrayDeque;

/**
 * The producers waiting for their turn or for the transport to drain, first come first served. A
 * stream is in it at most once ({@link DefaultStream#WAITING}); one that ends while waiting just
 * loses the flag and is skipped when its turn comes, so removal is O(1) and the stream object stays
 * at its old size. The deque is created at the first wait, so idle connections do not carry it, and
 * reuses its array afterwards. Event loop only.
 */
final class ProducerQueue {
  private ArrayDeque<DefaultStream> queue;

  void add(DefaultStream stream) {
    if (stream.has(DefaultStream.WAITING)) {
      return;
    }
    stream.set(DefaultStream.WAITING);
    if (queue == null) {
      queue = new ArrayDeque<>();
    }
    queue.add(stream);
  }

  /** The next stream still waiting, or null. */
  DefaultStream poll() {
    ArrayDeque<DefaultStream> q = queue;
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

  /** {@code stream} no longer waits (it ended). */
  void remove(DefaultStream stream) {
    if (stream.has(DefaultStream.WAITING)) {
      stream.clear(DefaultStream.WAITING);
    }
  }
}
