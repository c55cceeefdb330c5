package io.millrace.core;

import java.time.Duration;
import java.util.Objects;

/**
 * A client that makes a new connection by itself when its connection is lost. Set on {@link
 * ConnectionConfig.Builder#reconnect}; a client's {@code connect} then returns one {@link
 * Connection} that lives across connections and closes only when the application closes it or
 * reconnecting gives up.
 *
 * <p>Without {@link Resumption}, what was in flight when a connection broke is lost with it: its
 * streams fail with the connection's error (CONNECTION_ERROR and why the connection ended), and the
 * application decides what to retry. New requests go to the next connection: while there is none
 * they either wait for it ({@link WhileDisconnected#WAIT}, at most {@link #maxWait()}) or fail at
 * once ({@link WhileDisconnected#FAIL_FAST}) with REJECTED, which tells the caller the request was
 * never sent. With resumption as well, a broken connection is resumed and nothing is lost; a new
 * session is started only when resuming is impossible (the server rejected it, or it expired).
 *
 * <p>A connection the server closes gracefully (ERROR[CONNECTION_CLOSE], as when it is shut down
 * for a deploy) is replaced at once: its open streams finish on it, new requests go to the next. A
 * server that refuses the SETUP (REJECTED_SETUP, INVALID_SETUP, UNSUPPORTED_SETUP) is not tried
 * again: the connection closes with that error.
 */
public final class Reconnect {

  /** What a new request does while there is no connection. */
  public enum WhileDisconnected {
    /**
     * It waits for the next connection, at most {@link #maxWait()}, in order with the others that
     * wait; their payloads are bounded by {@link ConnectionConfig#maxQueuedCallBytes()}.
     */
    WAIT,
    /** It fails at once with REJECTED (fire-and-forget returns false). */
    FAIL_FAST
  }

  private final Duration minBackoff;
  private final Duration maxBackoff;
  private final double jitter;
  private final int maxAttempts;
  private final WhileDisconnected whileDisconnected;
  private final Duration maxWait;

  private Reconnect(Builder b) {
    this.minBackoff = b.minBackoff;
    this.maxBackoff = b.maxBackoff;
    this.jitter = b.jitter;
    this.maxAttempts = b.maxAttempts;
    this.whileDisconnected = b.whileDisconnected;
    this.maxWait = b.maxWait;
  }

  /** Reconnect with the defaults: forever, requests wait up to 30 s. */
  public static Reconnect defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The delay before the second attempt (the first is immediate); each later one doubles it, up to
   * {@link #maxBackoff()}. Default 50 ms.
   */
  public Duration minBackoff() {
    return minBackoff;
  }

  /**
   * The longest delay between attempts. Default 5 s. A connection that stayed up at least this long
   * counts as healthy: when it breaks, attempts count from the first again (immediate).
   */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** Each delay is drawn uniformly from {@code [d * (1 - jitter), d]}. Default 0.5. */
  public double jitter() {
    return jitter;
  }

  /**
   * Attempts in a row without a healthy connection before giving up: the connection then closes and
   * waiting requests fail. Default {@link Integer#MAX_VALUE}: never give up. The first connect
   * counts too: {@code connect} completes with the first connection made or fails once they are
   * spent.
   */
  public int maxAttempts() {
    return maxAttempts;
  }

  public WhileDisconnected whileDisconnected() {
    return whileDisconnected;
  }

  /**
   * How long a request waits for a connection ({@link WhileDisconnected#WAIT}) before it fails with
   * REJECTED. Default 30 s.
   */
  public Duration maxWait() {
    return maxWait;
  }

  /** Configures {@link Reconnect}. */
  public static final class Builder {
    private Duration minBackoff = Duration.ofMillis(50);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private double jitter = 0.5;
    private int maxAttempts = Integer.MAX_VALUE;
    private WhileDisconnected whileDisconnected = WhileDisconnected.WAIT;
    private Duration maxWait = Duration.ofSeconds(30);

    private Builder() {}

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

    public Builder maxAttempts(int attempts) {
      if (attempts < 1) {
        throw new IllegalArgumentException("at least one attempt");
      }
      this.maxAttempts = attempts;
      return this;
    }

    public Builder whileDisconnected(WhileDisconnected mode) {
      this.whileDisconnected = Objects.requireNonNull(mode);
      return this;
    }

    public Builder maxWait(Duration wait) {
      if (wait.isNegative() || wait.isZero()) {
        throw new IllegalArgumentException("the wait must be positive");
      }
      this.maxWait = wait;
      return this;
    }

    public Reconnect build() {
      return new Reconnect(this);
    }
  }
}
