package io.millrace.core.internal;

import io.netty.util.collection.IntObjectHashMap;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The open streams of one connection by id, this side's stream ids, and the count of streams the
 * peer opened (the figure its concurrency limit applies to). Event loop only, except {@link
 * #sizeForAnyThread()}.
 *
 * <p>Ids. A client's requests use odd ids from 1, a server's even ids from 2. After 2^31-1 the ids
 * wrap around to the first one, as the spec allows, skipping ids of this side's streams that are
 * still open: a connection never runs out of ids (at 8 M requests a second it would after about 4.5
 * minutes). Until the first wrap no id can be in use, so the common path is an add.
 */
final class StreamRegistry {
  private final IntObjectHashMap<DefaultStream> streams = new IntObjectHashMap<>();
  private final boolean client;
  private int nextId;
  private boolean idsWrapped;
  private int peerStreams;

  /** {@link #size()} for other threads: release stores here, acquire loads there. */
  @SuppressWarnings("unused") // accessed through SIZE
  private int sizeForAnyThread;

  private static final VarHandle SIZE;

  static {
    try {
      SIZE =
          MethodHandles.lookup().findVarHandle(StreamRegistry.class, "sizeForAnyThread", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  StreamRegistry(boolean client) {
    this.client = client;
    this.nextId = firstId();
  }

  private int firstId() {
    return client ? 1 : 2;
  }

  DefaultStream get(int id) {
    return streams.get(id);
  }

  boolean contains(int id) {
    return streams.containsKey(id);
  }

  int size() {
    return streams.size();
  }

  boolean isEmpty() {
    return streams.isEmpty();
  }

  /** The number of open streams as last seen by the event loop, for other threads. */
  int sizeForAnyThread() {
    return (int) SIZE.getAcquire(this);
  }

  /** Streams the peer opened that are still open. */
  int peerStreams() {
    return peerStreams;
  }

  /** Whether {@code id} is of the peer's parity (a request on one of ours is a violation). */
  boolean isPeerId(int id) {
    return (id & 1) == (client ? 0 : 1);
  }

  /** The next id for a request of this side. */
  int allocateId() {
    int id = nextId;
    if (idsWrapped) {
      for (int tries = streams.size(); tries >= 0 && streams.containsKey(id); tries--) {
        id = following(id);
      }
    }
    nextId = following(id);
    return id;
  }

  private int following(int id) {
    int next = id + 2;
    if (next < 0) { // past 2^31-1
      idsWrapped = true;
      return firstId();
    }
    return next;
  }

  /** Test hook: the id the next request will try, to reach the wrap-around quickly. */
  void nextIdForTest(int id) {
    if (id <= 0 || isPeerId(id)) {
      throw new IllegalArgumentException("not an id of this side: " + id);
    }
    nextId = id;
  }

  void add(DefaultStream stream) {
    streams.put(stream.id, stream);
    if (!stream.requester()) {
      peerStreams++;
    }
    SIZE.setRelease(this, streams.size());
  }

  /** Removes the stream if it is registered; returns whether it was. */
  boolean remove(DefaultStream stream) {
    if (stream.id == 0) {
      return false;
    }
    DefaultStream removed = streams.remove(stream.id);
    if (removed != stream) {
      // Already gone, or the id now belongs to a newer stream (ids wrap): put that one back.
      if (removed != null) {
        streams.put(stream.id, removed);
      }
      return false;
    }
    if (!stream.requester()) {
      peerStreams--;
    }
    SIZE.setRelease(this, streams.size());
    return true;
  }

  /** Removes every stream and returns them (for failing them when the connection ends). */
  List<DefaultStream> removeAll() {
    List<DefaultStream> all = new ArrayList<>(streams.values());
    streams.clear();
    peerStreams = 0;
    SIZE.setRelease(this, 0);
    return all;
  }

  /** Calls {@code action} for each open stream; the action must not add or remove streams. */
  void forEach(java.util.function.Consumer<DefaultStream> action) {
    for (DefaultStream stream : streams.values()) {
      action.accept(stream);
    }
  }
}
