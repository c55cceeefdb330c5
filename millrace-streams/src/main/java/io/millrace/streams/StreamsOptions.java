package io.millrace.streams;

import java.util.concurrent.Executor;

/**
 * How the Reactive Streams adapters grant credit, hand payloads over and run handlers. Immutable;
 * {@link #DEFAULT} suits most uses.
 */
public final class StreamsOptions {
  /** A prefetch of 256, heap copies of received payloads, handlers on the event loop. */
  public static final StreamsOptions DEFAULT = builder().build();

  private final int prefetch;
  private final boolean zeroCopy;
  private final Executor handlerExecutor;

  private StreamsOptions(Builder b) {
    this.prefetch = b.prefetch;
    this.zeroCopy = b.zeroCopy;
    this.handlerExecutor = b.handlerExecutor;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder that starts from these options. */
  public Builder toBuilder() {
    return builder().prefetch(prefetch).zeroCopy(zeroCopy).handlerExecutor(handlerExecutor);
  }

  /**
   * Credit granted ahead of a subscriber whose demand is bounded: the peer may send what the
   * subscriber has asked for and this many payloads more (they wait in a queue of at most this
   * size). Credit is topped up with one REQUEST_N once it has fallen three quarters of this short,
   * so a subscriber that requests one at a time does not cost a frame per payload, and one that
   * requests a thousand keeps a thousand in flight. The prefetch also follows the payloads' size:
   * at most about a mebibyte of them by their running average size (at least one), and 16 before a
   * size is known, growing from there by doubling once per half prefetch of payloads, so that a
   * slow subscriber of large payloads does not have this many waiting. A subscriber that requests
   * {@link Long#MAX_VALUE} gets unbounded credit and no queue: the transport's backpressure then
   * holds the peer back.
   *
   * <p>Sending, it is how many payloads a stream's Publisher is asked for ahead of what was sent
   * (within the peer's credit and about a mebibyte by size), except for a Publisher that emits on a
   * thread other than the connection's event loop: each refill wakes that thread, so its prefetch
   * there is at least 4,096 (what it is asked for ahead still follows credit and size).
   */
  public int prefetch() {
    return prefetch;
  }

  /**
   * Whether received payloads are retained views of the receive buffer (no copy; the receiver must
   * {@link Payload#release()} each) instead of heap copies (the default: nothing to release).
   */
  public boolean zeroCopy() {
    return zeroCopy;
  }

  /**
   * Where a responder's handler methods run and its Publishers are subscribed; null (the default)
   * runs them on the connection's event loop, which suits handlers that do not block.
   */
  public Executor handlerExecutor() {
    return handlerExecutor;
  }

  public static final class Builder {
    private int prefetch = 256;
    private boolean zeroCopy;
    private Executor handlerExecutor;

    private Builder() {}

    public Builder prefetch(int prefetch) {
      if (prefetch < 1) {
        throw new IllegalArgumentException("prefetch must be positive: " + prefetch);
      }
      this.prefetch = prefetch;
      return this;
    }

    public Builder zeroCopy(boolean zeroCopy) {
      this.zeroCopy = zeroCopy;
      return this;
    }

    /** See {@link StreamsOptions#handlerExecutor()}; a virtual-thread executor suits blocking. */
    public Builder handlerExecutor(Executor executor) {
      this.handlerExecutor = executor;
      return this;
    }

    public StreamsOptions build() {
      return new StreamsOptions(this);
    }
  }
}
