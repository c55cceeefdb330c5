package io.millrace.bench;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The client process of one run. Prints {@code TICK <millis> <messages> <bytes allocated>} once a
 * second, {@code MEASURE_START <millis>} after the warm-up and {@code MEASURE_END <millis>} at the
 * end; latency modes end with {@code LATENCY <count> <p50> <p90> <p99> <p99.9> <max>} in
 * microseconds.
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

  @Option(names = "--size", required = true)
  int size;

  @Option(names = "--interaction", required = true)
  String interaction;

  @Option(names = "--mode", defaultValue = "throughput")
  String mode;

  @Option(names = "--window", defaultValue = "1024")
  int window;

  @Option(names = "--rate", defaultValue = "0")
  long rate;

  @Option(names = "--warmup", defaultValue = "10")
  int warmupSeconds;

  @Option(names = "--duration", defaultValue = "10")
  int durationSeconds;

  private final LongAdder count = new LongAdder();
  private final Recorder latency = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
  private volatile boolean running = true;

  @Override
  public Integer call() throws Exception {
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
          latency.getIntervalHistogram(); // forget warm-up samples
          emit("TICK " + now + " " + count.sum() + " " + Systems.allocatedBytes());
          emit("MEASURE_START " + now);
          next = now + 1000;
        }
        if (now >= end) {
          emit("TICK " + now + " " + count.sum() + " " + Systems.allocatedBytes());
          emit("MEASURE_END " + now);
          break;
        }
        if (now >= next) {
          emit("TICK " + now + " " + count.sum() + " " + Systems.allocatedBytes());
          next += 1000;
        }
        Thread.sleep(Math.max(1, Math.min(next, Math.max(measureStart, now + 1)) - now));
      }
      running = false;
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

  /** Starts the workload; returns the pacing thread of the open-loop mode, or null. */
  private Thread start(BenchClient client, Interaction interaction) {
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
        Thread pacer = new Thread(() -> pace(client), "bench-pacer");
        pacer.setDaemon(true);
        pacer.start();
        return pacer;
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
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

  /** Open loop: requests leave at fixed intended times; latency counts from those times. */
  private void pace(BenchClient client) {
    long interval = TimeUnit.SECONDS.toNanos(1) / rate;
    long intended = System.nanoTime();
    while (running) {
      long now = System.nanoTime();
      if (now < intended) {
        LockSupport.parkNanos(intended - now);
        continue;
      }
      long sendTime = intended;
      client.requestResponse(
          () -> {
            latency.recordValue(
                Math.min(System.nanoTime() - sendTime, TimeUnit.SECONDS.toNanos(60)));
            count.increment();
          });
      intended += interval;
    }
  }
}
