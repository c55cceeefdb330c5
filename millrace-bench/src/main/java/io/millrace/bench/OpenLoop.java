package io.millrace.bench;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * Open-loop request-response load on one client: requests are due at fixed intended times, {@code
 * rate} per second, and a task on the client's event loop wakes every {@link #TICK_MICROS}
 * microseconds and sends everything due. Latency is recorded from each request's intended time, so
 * a stall anywhere shows in the percentiles (no coordinated omission).
 *
 * <p>It also says who fell behind, which the latency alone cannot. At most {@link #MAX_OUTSTANDING}
 * requests are in flight; a send that must wait for that cap means answers are late (the server or
 * the transport queues: {@link #cappedSends}). A send that is late while under the cap means the
 * generator itself could not keep its schedule: its loop, which also reads the answers, was busy
 * (the client side queues: {@link #maxLagNanos} without capped sends).
 */
public final class OpenLoop implements Runnable {
  public static final long TICK_MICROS = 50;
  public static final int MAX_OUTSTANDING = 4096;

  private final BenchClient client;
  private final Recorder latency;
  private final LongAdder answered;
  private final long interval;
  private volatile boolean running = true;
  private ScheduledFuture<?> task;
  // On the client's event loop.
  private long start;
  private long sent;
  private int outstanding;
  // Written on the loop, read once the load stopped (or roughly, meanwhile).
  private volatile long maxLagNanos;
  private volatile long cappedSends;

  /** Load of {@code rate} requests a second; each answer's latency to {@code latency}. */
  public OpenLoop(BenchClient client, long rate, Recorder latency, LongAdder answered) {
    this.client = client;
    this.latency = latency;
    this.answered = answered;
    this.interval = TimeUnit.SECONDS.toNanos(1) / Math.max(1, rate);
  }

  public void start() {
    client
        .eventLoop()
        .execute(
            () -> {
              start = System.nanoTime();
              task =
                  client
                      .eventLoop()
                      .scheduleAtFixedRate(this, TICK_MICROS, TICK_MICROS, TimeUnit.MICROSECONDS);
            });
  }

  /** Stops sending (answers still in flight are still recorded). */
  public void stop() {
    running = false;
  }

  /** Forgets the lag and capped sends so far (the warm-up's). */
  public void resetCounters() {
    client
        .eventLoop()
        .execute(
            () -> {
              maxLagNanos = 0;
              cappedSends = 0;
            });
  }

  /** The latest a request was sent after its intended time, in nanoseconds. */
  public long maxLagNanos() {
    return maxLagNanos;
  }

  /** Requests that were due while {@link #MAX_OUTSTANDING} were in flight. */
  public long cappedSends() {
    return cappedSends;
  }

  @Override
  public void run() {
    if (!running) {
      task.cancel(false);
      return;
    }
    long now = System.nanoTime();
    long due = (now - start) / interval;
    if (sent < due) {
      long lag = now - (start + sent * interval);
      if (lag > maxLagNanos) {
        maxLagNanos = lag;
      }
    }
    while (sent < due) {
      if (outstanding >= MAX_OUTSTANDING) {
        cappedSends += due - sent;
        break;
      }
      long intended = start + sent * interval;
      sent++;
      outstanding++;
      client.requestResponse(
          () -> {
            outstanding--;
            latency.recordValue(
                Math.min(System.nanoTime() - intended, TimeUnit.SECONDS.toNanos(60)));
            answered.increment();
          });
    }
  }
}
