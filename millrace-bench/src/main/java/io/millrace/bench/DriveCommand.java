package io.millrace.bench;

import io.millrace.bench.millrace.BenchTransport;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of one run. Prints {@code TICK <millis> <messages> <bytes allocated> <CPU ns>
 * <GC ms> <JIT ms>} once a second, {@code MEASURE_START <millis>} after the warm-up and {@code
 * MEASURE_END <millis>} at the end; latency modes end with {@code LATENCY <count> <p50> <p90> <p99>
 * <p99.9> <max>} in microseconds.
 *
 * <p>Messages counted: responses (request-response), messages sent (fire-and-forget), items
 * received (request-stream), echoes received (request-channel).
 *
 * <p>Modes: {@code throughput} keeps {@code --window} requests in flight; {@code pingpong} keeps
 * one; {@code rate} sends at {@code --rate} per second from a pacing thread whatever the responses
 * do (open loop), and measures latency from each request's intended send time, so stalls show up in
 * the percentiles instead of being hidden (coordinated omission).
 */
@Command(name = "drive", hidden = true, description = "Client process of one benchmark run.")
final class DriveCommand implements Callable<Integer> {
  @Option(names = "--system", required = true)
  String system;

  @Option(names = "--port", required = true)
  int port;

  @Option(names = "--transport", defaultValue = "tcp")
  String transport;

  @Option(names = "--io", description = "Socket I/O kind: epoll, io_uring or nio.")
  String io;

  @Option(names = "--size", required = true)
  int size;

  @Option(names = "--interaction", required = true)
  String interaction;

  @Option(names = "--mode", defaultValue = "throughput")
  String mode;

  /**
   * {@code loop}: requests issued on the client's event loop; {@code thread}: by another thread.
   */
  @Option(names = "--caller", defaultValue = "loop")
  String caller;

  @Option(names = "--window", defaultValue = "1024")
  int window;

  @Option(names = "--rate", defaultValue = "0")
  long rate;

  @Option(names = "--warmup", defaultValue = "10")
  int warmupSeconds;

  @Option(names = "--duration", defaultValue = "10")
  int durationSeconds;

  private final LongAdder count = new LongAdder();

  /** Null in throughput mode: its counts (about 220 KB each, three of them) would be live set. */
  private Recorder latency;

  private volatile boolean running = true;
  private OpenLoop openLoop;

  @Override
  public Integer call() throws Exception {
    if (io != null) {
      System.setProperty("millrace.io", io); // before anything asks IoKind.preferred()
    }
    BenchTransport.use(transport);
    if (!"throughput".equals(mode)) {
      latency = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
    }
    BenchClient client = Systems.byName(system).connect(port, size);
    try {
      Thread pacer = start(client, Interaction.parse(interaction));
      long start = System.currentTimeMillis();
      long measureStart = start + TimeUnit.SECONDS.toMillis(warmupSeconds);
      long end = measureStart + TimeUnit.SECONDS.toMillis(durationSeconds);
      boolean measuring = false;
      long next = start + 1000;
      while (true) {
        long now = System.currentTimeMillis();
        if (!measuring && now >= measureStart) {
          measuring = true;
          if (latency != null) {
            latency.getIntervalHistogram(); // forget warm-up samples
          }
          emit(Systems.tick(now, count.sum()));
          emit("MEASURE_START " + now);
          next = now + 1000;
        }
        if (now >= end) {
          emit(Systems.tick(now, count.sum()));
          emit("MEASURE_END " + now);
          break;
        }
        if (now >= next) {
          emit(Systems.tick(now, count.sum()));
          next += 1000;
        }
        Thread.sleep(Math.max(1, Math.min(next, Math.max(measureStart, now + 1)) - now));
      }
      running = false;
      if (openLoop != null) {
        openLoop.stop();
        openLoop.awaitAnswers(5_000);
      }
      if (pacer != null) {
        pacer.join(2000);
      }
      if (!"throughput".equals(mode)) {
        Histogram h = latency.getIntervalHistogram();
        emit(
            String.format(
                "LATENCY %d %.1f %.1f %.1f %.1f %.1f",
                h.getTotalCount(),
                h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(90) / 1000.0,
                h.getValueAtPercentile(99) / 1000.0,
                h.getValueAtPercentile(99.9) / 1000.0,
                h.getMaxValue() / 1000.0));
      }
    } finally {
      client.close();
    }
    return 0;
  }

  private static void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** Starts the workload; returns a thread to join at the end, or null. */
  private Thread start(BenchClient client, Interaction interaction) {
    if ("thread".equals(caller)) {
      return startOnApplicationThread(client, interaction);
    }
    switch (interaction) {
      case FIRE_AND_FORGET:
        client.startFireAndForget(count);
        return null;
      case REQUEST_STREAM:
        client.startStream(count);
        return null;
      case REQUEST_CHANNEL:
        client.startChannel(count);
        return null;
      default:
        break;
    }
    switch (mode) {
      case "throughput":
        Runnable again =
            new Runnable() {
              @Override
              public void run() {
                count.increment();
                if (running) {
                  client.requestResponse(this);
                }
              }
            };
        for (int i = 0; i < window; i++) {
          client.requestResponse(again);
        }
        return null;
      case "pingpong":
        new PingPong(client).send();
        return null;
      case "rate":
        openLoop = new OpenLoop(client, rate, latency, count);
        openLoop.start();
        return null;
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
  }

  /**
   * Requests from an application thread, as a service thread would issue them: request-response
   * keeps {@code --window} in flight with a semaphore (one permit back per response, on whatever
   * thread the system answers on); fire-and-forget sends through the system's own backpressure.
   */
  private Thread startOnApplicationThread(BenchClient client, Interaction interaction) {
    Runnable work;
    if (interaction == Interaction.REQUEST_RESPONSE) {
      java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(window);
      Runnable onResponse =
          () -> {
            count.increment();
            inFlight.release();
          };
      work =
          () -> {
            try {
              while (running) {
                if (inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                  client.requestResponse(onResponse);
                }
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
    } else if (interaction == Interaction.FIRE_AND_FORGET) {
      if (!client.sendsFireAndForgetFromThreads()) {
        throw new IllegalArgumentException(system + " has no fire-and-forget from a thread");
      }
      work =
          () -> {
            try {
              client.fireAndForgetFromThisThread(count, () -> running);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          };
    } else {
      throw new IllegalArgumentException("--caller thread is for request-response and fnf");
    }
    Thread thread = new Thread(work, "bench-application");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /** One request in flight: each response records its round trip and sends the next. */
  private final class PingPong implements Runnable {
    private final BenchClient client;
    private long sentAt;

    PingPong(BenchClient client) {
      this.client = client;
    }

    void send() {
      sentAt = System.nanoTime();
      client.requestResponse(this);
    }

    @Override
    public void run() {
      latency.recordValue(Math.min(System.nanoTime() - sentAt, TimeUnit.SECONDS.toNanos(60)));
      count.increment();
      if (running) {
        send();
      }
    }
  }
}
