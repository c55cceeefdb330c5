package io.millrace.bench;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * Open-loop request-response load on one client: requests are due at fixed intended times, {@code
 * rate} per second, and a task on the client's event loop wakes at each intended time (at most
 * every {@link #TICK_MICROS} microseconds: faster loads go out in small batches) and sends
 * everything due. Latency is recorded from each request's intended time, so a stall anywhere shows
 * in the percentiles (no coordinated omission). Requests still due when the load stops are recorded
 * as late as they are then, and {@link #awaitAnswers} waits for those in flight.
 *
 * <p>It also says who fell behind, which the latency alone cannot. At most {@link #MAX_OUTSTANDING}
 * requests are in flight; a request due while that many are means answers are late (the server or
 * the transport queues: {@link #cappedSends}). A send that is late while under the cap means the
 * generator itself could not keep its schedule: its loop, which also reads the answers, was busy or
 * not scheduled (the client side: {@link #maxLagNanos} without capped sends).
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
  private long cappedThrough;
  // Written on the loop, read by the thread that waits for the answers.
  private volatile int outstanding;
  private volatile long maxLagNanos;
  private volatile long cappedSends;
  private volatile long failedCalls;

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
              long tick = Math.max(TimeUnit.MICROSECONDS.toNanos(TICK_MICROS), interval);
              task = client.eventLoop().scheduleAtFixedRate(this, tick, tick, TimeUnit.NANOSECONDS);
            });
  }

  /**
   * Stops sending: requests due by now and never sent are recorded as late as they are; answers
   * still in flight are recorded as they come (see {@link #awaitAnswers}).
   */
  public void stop() {
    client
        .eventLoop()
        .execute(
            () -> {
              if (!running) {
                return;
              }
              running = false;
              long now = System.nanoTime();
              long due = (now - start) / interval;
              for (long i = sent; i < due; i++) {
                latency.recordValue(Math.min(now - intended(i), TimeUnit.SECONDS.toNanos(60)));
              }
              sent = Math.max(sent, due);
            });
  }

  /** Waits, at most {@code timeoutMillis}, until stopped with nothing in flight; false if not. */
  public boolean awaitAnswers(long timeoutMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (running || outstanding > 0) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(1);
    }
    return true;
  }

  /**
   * When request {@code i} (from 0) is due: one interval after the start for the first, so that a
   * tick at each interval finds exactly one request due, sent on time.
   */
  private long intended(long i) {
    return start + (i + 1) * interval;
  }

  /** Forgets the lag and capped sends so far (the warm-up's). */
  public void resetCounters() {
    client
        .eventLoop()
        .execute(
            () -> {
              maxLagNanos = 0;
              cappedSends = 0;
              failedCalls = 0;
            });
  }

  /** The latest a request was sent after its intended time, in nanoseconds. */
  public long maxLagNanos() {
    return maxLagNanos;
  }

  /** Calls that failed instead of being answered (callbacks on the client's event loop). */
  public long failedCalls() {
    return failedCalls;
  }

  /** Requests that fell due while {@link #MAX_OUTSTANDING} were in flight (each counted once). */
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
      long lag = now - intended(sent);
      if (lag > maxLagNanos) {
        maxLagNanos = lag;
      }
    }
    while (sent < due) {
      if (outstanding >= MAX_OUTSTANDING) {
        long from = Math.max(sent, cappedThrough);
        if (due > from) {
          cappedSends += due - from;
          cappedThrough = due;
        }
        break;
      }
      long intended = intended(sent);
      sent++;
      outstanding++;
      client.requestResponse(
          () -> {
            outstanding--;
            latency.recordValue(
                Math.min(System.nanoTime() - intended, TimeUnit.SECONDS.toNanos(60)));
            answered.increment();
          },
          () -> {
            outstanding--; // not an answer: no latency, and the step says how many failed
            failedCalls++;
          });
    }
  }
}
