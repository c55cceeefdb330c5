package io.millrace.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.ToLongFunction;

/** What one run measured, computed from the TICK lines of its two processes. */
final class RunResult {
  final String system;
  final Interaction interaction;
  final int size;
  final String heap;
  final String caller;
  double median;
  double min;
  double max;
  double allocClient = Double.NaN;
  double allocServer = Double.NaN;

  /** Share of the measured window each side's collectors reported (pauses), 0..1; NaN: unknown. */
  double gcClient = Double.NaN;

  double gcServer = Double.NaN;

  /**
   * Share of the measured window each side's JIT compilers reported compiling; NaN: unknown.
   * HotSpot counts each compilation's wall time, summed over its compiler threads, when the
   * compilation ends, so the share can pass 1, and a long compilation begun in the warm-up counts
   * whole. High when the warm-up was too short for the system: the window then measures the
   * compilers too.
   */
  double jitClient = Double.NaN;

  double jitServer = Double.NaN;

  /**
   * Each process's CPU time (all its threads) over the measured window per message, in nanoseconds;
   * NaN: unknown. On a virtual machine whose host takes time away from it (steal), throughput
   * swings with the host's load while these stay near the work each message costs.
   */
  double cpuClient = Double.NaN;

  double cpuServer = Double.NaN;
  String failure;

  /** The system's own name, without the transport suffix {@link #system} has off TCP. */
  String baseSystem;

  String transport = "tcp";

  /** The socket I/O kind asked for; null: the default. */
  String io;

  /** Which round of a multi-round run this is (1 in a single-round run). */
  int round = 1;

  /** How many rounds a summary's figures come from (1 for a single run). */
  int rounds = 1;

  RunResult(String system, Interaction interaction, int size, String heap) {
    this(system, interaction, size, heap, "loop");
  }

  /** {@code caller}: loop (requests from the client's event loop) or thread. */
  RunResult(String system, Interaction interaction, int size, String heap, String caller) {
    this.system = system;
    this.interaction = interaction;
    this.size = size;
    this.heap = heap;
    this.caller = caller;
    this.baseSystem = system;
  }

  /** Whether {@code other} measures the same thing (in another round, say). */
  boolean sameMeasurement(RunResult other) {
    return system.equals(other.system)
        && interaction == other.interaction
        && size == other.size
        && heap.equals(other.heap)
        && caller.equals(other.caller);
  }

  /** A result for the same measurement with no figures yet. */
  RunResult copyOfMeasurement() {
    RunResult copy = new RunResult(system, interaction, size, heap, caller);
    copy.baseSystem = baseSystem;
    copy.transport = transport;
    copy.io = io;
    return copy;
  }

  /** The name of a system on a transport and I/O kind, as reports show it: millrace/tls. */
  static String display(String system, String transport, String io) {
    if ("tcp".equals(transport) && io == null) {
      return system;
    }
    return system + "/" + transport + (io == null ? "" : "+" + io);
  }

  /**
   * The interaction's name, with the caller when it is not the event loop: {@code request-response
   * (thread)}. The CSV's interaction column carries it too, so its columns stay those of the first
   * version.
   */
  String label() {
    return interaction.cliName + ("loop".equals(caller) ? "" : " (" + caller + ")");
  }

  /**
   * One {@code TICK} line: time, cumulative messages, cumulative bytes allocated, the process's
   * cumulative CPU nanoseconds, the cumulative milliseconds of garbage collection and of JIT
   * compilation (-1 when the line has none).
   */
  record Tick(
      long millis, long count, long allocated, long cpuNanos, long gcMillis, long jitMillis) {
    static Tick parse(String line) {
      String[] parts = line.split(" ");
      return new Tick(
          Long.parseLong(parts[1]),
          Long.parseLong(parts[2]),
          Long.parseLong(parts[3]),
          parts.length > 4 ? Long.parseLong(parts[4]) : -1,
          parts.length > 5 ? Long.parseLong(parts[5]) : -1,
          parts.length > 6 ? Long.parseLong(parts[6]) : -1);
    }
  }

  /** The share of time between {@code first} and {@code last} spent collecting; NaN: unknown. */
  private static double gcShare(Tick first, Tick last) {
    return share(first, last, Tick::gcMillis);
  }

  /** The share of time between {@code first} and {@code last} spent compiling; NaN: unknown. */
  private static double jitShare(Tick first, Tick last) {
    return share(first, last, Tick::jitMillis);
  }

  /** What {@code millis} (a cumulative count of milliseconds) grew by, over the time between. */
  private static double share(Tick first, Tick last, ToLongFunction<Tick> millis) {
    if (first == null
        || millis.applyAsLong(first) < 0
        || millis.applyAsLong(last) < 0
        || last.millis() <= first.millis()) {
      return Double.NaN;
    }
    return (double) (millis.applyAsLong(last) - millis.applyAsLong(first))
        / (last.millis() - first.millis());
  }

  /**
   * Whether either side's compilers took more than {@link #JIT_BUSY} of the window: its figures
   * measure the compilers as well (on one pinned core, a heavy system's client ran at a fifth of
   * its rate with them at 86 %).
   */
  boolean jitBusy() {
    return jitClient > JIT_BUSY || jitServer > JIT_BUSY;
  }

  static final double JIT_BUSY = 0.10;

  /** CPU nanoseconds between {@code first} and {@code last} per message; NaN: unknown. */
  private static double cpuPerMessage(Tick first, Tick last, double messages) {
    if (first == null || first.cpuNanos() < 0 || last.cpuNanos() < 0 || messages <= 0) {
      return Double.NaN;
    }
    return (double) (last.cpuNanos() - first.cpuNanos()) / messages;
  }

  /**
   * Fills the throughput figures from the client's ticks between measurement start and end, and the
   * allocation and CPU figures from both sides over the same window. Both sides' CPU is divided by
   * the messages of the side the throughput counts, over each side's own interval, so the two add
   * up to what a message costs the pair.
   */
  void compute(List<Tick> clientTicks, List<Tick> serverTicks, long start, long end) {
    // Messages are counted where they arrive: fire-and-forget at the server (a client's count of
    // what it handed over would include anything lost on the way), the rest at the client.
    List<Tick> counted = interaction == Interaction.FIRE_AND_FORGET ? serverTicks : clientTicks;
    List<Tick> window = new ArrayList<>();
    for (Tick t : counted) {
      if (t.millis() >= start && t.millis() <= end) {
        window.add(t);
      }
    }
    if (window.size() < 2) {
      failure = "no measurement window";
      return;
    }
    List<Double> rates = new ArrayList<>();
    for (int i = 1; i < window.size(); i++) {
      Tick a = window.get(i - 1);
      Tick b = window.get(i);
      if (b.millis() - a.millis() >= 500) {
        rates.add((b.count() - a.count()) * 1000.0 / (b.millis() - a.millis()));
      }
    }
    if (rates.isEmpty()) {
      failure = "no full second measured";
      return;
    }
    Collections.sort(rates);
    int n = rates.size();
    median = n % 2 == 1 ? rates.get(n / 2) : (rates.get(n / 2 - 1) + rates.get(n / 2)) / 2;
    min = rates.get(0);
    max = rates.get(n - 1);
    Tick first = window.get(0);
    Tick last = window.get(window.size() - 1);
    long messages = last.count() - first.count();
    Tick clientFirst = null;
    Tick clientLast = null;
    for (Tick t : clientTicks) {
      if (t.millis() >= start - 100 && t.millis() <= end + 100) {
        if (clientFirst == null) {
          clientFirst = t;
        }
        clientLast = t;
      }
    }
    if (clientFirst != null && messages > 0) {
      allocClient = (double) (clientLast.allocated() - clientFirst.allocated()) / messages;
    }
    gcClient = gcShare(clientFirst, clientLast);
    jitClient = jitShare(clientFirst, clientLast);
    if (clientFirst != null) {
      cpuClient =
          cpuPerMessage(clientFirst, clientLast, countBetween(counted, clientFirst, clientLast));
    }
    Tick serverFirst = null;
    Tick serverLast = null;
    for (Tick t : serverTicks) {
      if (t.millis() >= start - 100 && t.millis() <= end + 100) {
        if (serverFirst == null) {
          serverFirst = t;
        }
        serverLast = t;
      }
    }
    if (serverFirst != null && serverLast.count() > serverFirst.count()) {
      allocServer =
          (double) (serverLast.allocated() - serverFirst.allocated())
              / (serverLast.count() - serverFirst.count());
    }
    gcServer = gcShare(serverFirst, serverLast);
    jitServer = jitShare(serverFirst, serverLast);
    if (serverFirst != null) {
      cpuServer =
          cpuPerMessage(serverFirst, serverLast, countBetween(counted, serverFirst, serverLast));
    }
  }

  /**
   * Messages the counting side saw between the times of two ticks of either side. The two processes
   * tick once a second but not on the same instants (the server on whole seconds of the clock, the
   * client from its measurement's start), so the counting side's cumulative count is interpolated
   * at those times: each side's CPU is set against the messages of its own interval.
   */
  private static double countBetween(List<Tick> counted, Tick from, Tick to) {
    return countAt(counted, to.millis()) - countAt(counted, from.millis());
  }

  /** The cumulative count at {@code millis}, linear between ticks, held at the ends. */
  static double countAt(List<Tick> ticks, long millis) {
    Tick before = null;
    for (Tick t : ticks) {
      if (t.millis() >= millis) {
        if (before == null || t.millis() == millis) {
          return t.count();
        }
        double share = (double) (millis - before.millis()) / (t.millis() - before.millis());
        return before.count() + share * (t.count() - before.count());
      }
      before = t;
    }
    return before == null ? 0 : before.count();
  }

  boolean ok() {
    return failure == null;
  }
}
