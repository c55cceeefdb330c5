package io.millrace.core.internal;

import io.netty.util.concurrent.EventExecutor;

/** The {@link TimerWheel} of a connection's loop, looked up on first use (which is on the loop). */
final class LoopTimers implements Timers {
  private final EventExecutor executor;
  private TimerWheel wheel;

  LoopTimers(EventExecutor executor) {
    this.executor = executor;
  }

  private TimerWheel wheel() {
    TimerWheel w = wheel;
    if (w == null) {
      w = TimerWheel.forLoop(executor);
      wheel = w;
    }
    return w;
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public void schedule(Timeout timeout, long deadlineNanos) {
    wheel().schedule(timeout, deadlineNanos);
  }

  @Override
  public void cancel(Timeout timeout) {
    if (timeout.isScheduled()) {
      wheel().cancel(timeout);
    }
  }
}
