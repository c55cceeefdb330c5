package io.millrace.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * Lease accounting of one connection (RSocket's LEASE), both directions: what the peer granted this
 * side's requester, and what this side granted the peer. A lease allows a number of requests within
 * a time-to-live; the newest replaces the one before and expiry means zero. Event loop only.
 */
final class Leases {
  private final Timers timers;
  private boolean enabled;
  private int requesterLeft;
  private int requesterGranted;
  private long requesterExpiry;
  private int responderLeft;
  private long responderExpiry;

  Leases(Timers timers) {
    this.timers = timers;
  }

  void enable(boolean enabled) {
    this.enabled = enabled;
  }

  boolean enabled() {
    return enabled;
  }

  /** The peer granted this side a lease; returns its expiry time. */
  long received(int ttlMillis, int requests) {
    requesterLeft = requests;
    requesterGranted = requests;
    requesterExpiry = timers.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    return requesterExpiry;
  }

  /** Takes a request from the peer's lease; false when none is left or it expired. */
  boolean takeRequester() {
    if (!enabled) {
      return true;
    }
    if (!requesterValid()) {
      return false;
    }
    requesterLeft--;
    return true;
  }

  boolean requesterValid() {
    return requesterLeft > 0 && timers.nanoTime() - requesterExpiry < 0;
  }

  long requesterExpiry() {
    return requesterExpiry;
  }

  /** 0 to 1: the share of the peer's current lease left to use (1 without leases). */
  double requesterAvailability() {
    if (!enabled) {
      return 1.0;
    }
    if (!requesterValid() || requesterGranted <= 0) {
      return 0.0;
    }
    return (double) requesterLeft / requesterGranted;
  }

  /** This side granted the peer a lease. */
  void granted(int ttlMillis, int requests) {
    responderLeft = requests;
    responderExpiry = timers.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
  }

  /** Milliseconds left of the lease this side granted; 0 when none or expired. */
  int responderRemainingMillis() {
    long left = responderExpiry - timers.nanoTime();
    return left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left));
  }

  /** Requests left of the lease this side granted. */
  int responderLeft() {
    return responderLeft;
  }

  /** The peer's lease no longer holds (the connection it came on broke). */
  void forgetReceived() {
    requesterLeft = 0;
  }

  /** Takes a request from the lease this side granted; false when the peer exceeded it. */
  boolean takeResponder() {
    if (!enabled) {
      return true;
    }
    if (responderLeft <= 0 || timers.nanoTime() - responderExpiry >= 0) {
      return false;
    }
    responderLeft--;
    return true;
  }
}
