package io.millrace.core.internal;

/**
 * A token bucket for inbound frame rates: {@code ratePerSecond} tokens a second, holding at most as
 * many. Event loop only; no allocation.
 */
final class TokenBucket {
  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private final long capacity;
  private final long nanosPerToken;
  private long tokens;
  private long lastRefill;

  TokenBucket(int ratePerSecond, long now) {
    this.capacity = ratePerSecond;
    this.nanosPerToken = Math.max(1, NANOS_PER_SECOND / ratePerSecond);
    this.tokens = ratePerSecond;
    this.lastRefill = now;
  }

  /** Takes one token if there is one. */
  boolean tryAcquire(long now) {
    long elapsed = now - lastRefill;
    if (elapsed >= nanosPerToken) {
      long refill = elapsed / nanosPerToken;
      tokens = Math.min(capacity, tokens + refill);
      lastRefill += refill * nanosPerToken;
    }
    if (tokens > 0) {
      tokens--;
      return true;
    }
    return false;
  }
}
