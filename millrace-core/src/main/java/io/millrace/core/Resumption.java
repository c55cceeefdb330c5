package io.millrace.core;

import java.time.Duration;

/**
 * Session resumption (RSocket 1.0 RESUME): a connection that breaks is carried on over a new one
 * without losing, repeating or reordering a frame. Set on {@link
 * ConnectionConfig.Builder#resumption} for a client (its SETUP then asks for it, and it reconnects
 * by itself) and for a server (it then keeps the sessions of clients that asked).
 *
 * <p>Every frame the peer has not confirmed is kept until it is confirmed or the session ends: when
 * {@link #maxStoreBytes()} are held, streams are held back ({@link Stream#isReady()} is false and
 * reading from the peer pauses), never is a frame dropped. Peers confirm what they received in
 * KEEPALIVE frames; Millrace sends one whenever it has received 256 KiB since the last, and asks
 * for one when half its own store is used, so that the store drains at full speed even against
 * peers that confirm only in their regular keepalives.
 */
public final class Resumption {
  private final Duration sessionTimeout;
  private final long maxStoreBytes;
  private final Duration minBackoff;
  private final Duration maxBackoff;
  private final double jitter;

  private Resumption(Builder b) {
    this.sessionTimeout = b.sessionTimeout;
    this.maxStoreBytes = b.maxStoreBytes;
    this.minBackoff = b.minBackoff;
    this.maxBackoff = b.maxBackoff;
    this.jitter = b.jitter;
  }

  /** Resumption with the defaults. */
  public static Resumption defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * How long a session lives without a connection. Server: after this, a detached session ends (its
   * streams fail) and a RESUME for it is answered REJECTED_RESUME. Client: after this it stops
   * reconnecting and ends the session. Default 2 minutes (rsocket-java's default).
   */
  public Duration sessionTimeout() {
    return sessionTimeout;
  }

  /** Bytes of unconfirmed frames kept per connection before senders are held back. 16 MiB. */
  public long maxStoreBytes() {
    return maxStoreBytes;
  }

  /**
   * Client: the delay before the second reconnect attempt (the first is immediate); each later one
   * doubles it, up to {@link #maxBackoff()}. Default 50 ms.
   */
  public Duration minBackoff() {
    return minBackoff;
  }

  /** Client: the longest delay between reconnect attempts. Default 5 s. */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  /**
   * Client: each delay is drawn uniformly from {@code [d * (1 - jitter), d]}, so that clients cut
   * off together do not come back together. Default 0.5.
   */
  public double jitter() {
    return jitter;
  }

  /** Configures {@link Resumption}. */
  public static final class Builder {
    private Duration sessionTimeout = Duration.ofMinutes(2);
    private long maxStoreBytes = 16L << 20;
    private Duration minBackoff = Duration.ofMillis(50);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private double jitter = 0.5;

    private Builder() {}

    public Builder sessionTimeout(Duration timeout) {
      if (timeout.toMillis() <= 0) {
        throw new IllegalArgumentException("session timeout must be positive");
      }
      this.sessionTimeout = timeout;
      return this;
    }

    public Builder maxStoreBytes(long bytes) {
      if (bytes < 64 * 1024) {
        throw new IllegalArgumentException("the replay store needs at least 64 KiB");
      }
      this.maxStoreBytes = bytes;
      return this;
    }

    public Builder backoff(Duration min, Duration max) {
      BackoffChecks.range(min, max);
      this.minBackoff = min;
      this.maxBackoff = max;
      return this;
    }

    public Builder jitter(double jitter) {
      BackoffChecks.jitter(jitter);
      this.jitter = jitter;
      return this;
    }

    public Resumption build() {
      return new Resumption(this);
    }
  }
}
