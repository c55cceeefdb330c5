package io.millrace.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * Keepalive and liveness of one connection on its loop's {@link Timers}: the client sends KEEPALIVE
 * every interval; both sides close the connection when nothing has arrived for the max lifetime.
 *
 * <p>The time of the last read is taken once per read batch, not per frame, and the one timeout
 * runs only when something is due: the next ping, or the moment the silence would exceed the max
 * lifetime. An idle server connection whose client pings every 30 s therefore costs one timer run
 * per max lifetime and nothing in between.
 */
final class KeepAlive extends Timeout {
  /** What the connection does when the keepalive says so. */
  interface Owner {
    void sendKeepAlive();

    void keepAliveTimedOut(long silentMillis, long maxLifetimeMillis);
  }

  private final Timers timers;
  private final Owner owner;
  private long intervalNanos;
  private long maxLifetimeNanos;
  private boolean pinging;
  private long lastReceivedNanos;
  private long nextPingNanos;
  private boolean running;

  KeepAlive(Timers timers, Owner owner) {
    this.timers = timers;
    this.owner = owner;
  }

  /** Starts the timer; {@code ping} sends KEEPALIVE every interval (the client's role). */
  void start(long intervalMillis, long maxLifetimeMillis, boolean ping) {
    intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMillis);
    maxLifetimeNanos = TimeUnit.MILLISECONDS.toNanos(maxLifetimeMillis);
    pinging = ping;
    restart();
  }

  /**
   * Starts again with the settings of the last {@link #start}, counting silence from now (a resumed
   * connection); does nothing if it was never started (SETUP not yet accepted).
   */
  void restart() {
    if (intervalNanos == 0) {
      return;
    }
    long now = timers.nanoTime();
    lastReceivedNanos = now;
    nextPingNanos = now + intervalNanos;
    running = true;
    reschedule();
  }

  /** Something arrived from the peer (called once per read batch). */
  void received(long nowNanos) {
    lastReceivedNanos = nowNanos;
  }

  void stop() {
    running = false;
    timers.cancel(this);
  }

  @Override
  void expire(long nowNanos) {
    if (!running) {
      return;
    }
    long now = timers.nanoTime();
    long silent = now - lastReceivedNanos;
    if (silent > maxLifetimeNanos) {
      running = false;
      owner.keepAliveTimedOut(
          TimeUnit.NANOSECONDS.toMillis(silent), TimeUnit.NANOSECONDS.toMillis(maxLifetimeNanos));
      return;
    }
    if (pinging && now - nextPingNanos >= 0) {
      nextPingNanos = now + intervalNanos;
      owner.sendKeepAlive();
    }
    if (running) {
      reschedule();
    }
  }

  private void reschedule() {
    long livenessDeadline = lastReceivedNanos + maxLifetimeNanos + 1;
    long deadline =
        pinging && nextPingNanos - livenessDeadline < 0 ? nextPingNanos : livenessDeadline;
    timers.schedule(this, deadline);
  }
}
