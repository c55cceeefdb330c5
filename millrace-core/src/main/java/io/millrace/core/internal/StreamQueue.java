package io.millrace.core.internal;

/**
 * A FIFO of streams linked through their own fields, so adding, polling and removing allocate
 * nothing and removal from the middle is O(1). A stream is in it at most once. Event loop only.
 */
final class StreamQueue {
  private DefaultStream head;
  private DefaultStream tail;

  /** Appends {@code stream} unless it is already queued. */
  void add(DefaultStream stream) {
    if (stream.waiting) {
      return;
    }
    stream.waiting = true;
    stream.waitPrev = tail;
    stream.waitNext = null;
    if (tail == null) {
      head = stream;
    } else {
      tail.waitNext = stream;
    }
    tail = stream;
  }

  /** Removes and returns the first stream, or null when empty. */
  DefaultStream poll() {
    DefaultStream first = head;
    if (first != null) {
      remove(first);
    }
    return first;
  }

  /** Removes {@code stream} if it is queued. */
  void remove(DefaultStream stream) {
    if (!stream.waiting) {
      return;
    }
    stream.waiting = false;
    DefaultStream prev = stream.waitPrev;
    DefaultStream next = stream.waitNext;
    if (prev == null) {
      head = next;
    } else {
      prev.waitNext = next;
    }
    if (next == null) {
      tail = prev;
    } else {
      next.waitPrev = prev;
    }
    stream.waitPrev = null;
    stream.waitNext = null;
  }

  boolean isEmpty() {
    return head == null;
  }
}
