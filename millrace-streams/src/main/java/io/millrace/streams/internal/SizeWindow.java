package io.millrace.streams.internal;

/**
 * How many messages a sender lets be asked for or wait, by their size: about {@link
 * ReadAhead#BYTES_AHEAD} bytes of them by a running average of sampled sizes (at least {@link
 * ReadAhead#MIN_AHEAD}), {@value #UNSAMPLED} before any size is sampled. Shared by the outbound
 * sink's window and the StreamObserver flavour's producer bound, so that a reader that stops holds
 * a few large messages at a sender, not a prefetch's count of them. The caller keeps the average (a
 * long, 0 until the first sample) on its own thread.
 */
public final class SizeWindow {
  /** Messages allowed before any size is sampled. */
  public static final int UNSAMPLED = 16;

  private SizeWindow() {}

  /**
   * Whether the {@code n}th message (from 0) is sampled: each of the first sixteen, then one in 16.
   */
  public static boolean samples(long n) {
    return n < UNSAMPLED || (n & 15) == 0;
  }

  /**
   * {@code average} with a message of {@code size} bytes sampled, framing included: up at once,
   * down slowly, so that a large message after small ones shrinks the window now.
   */
  public static long sampled(long average, long size) {
    long framed = size + ReadAhead.FRAMING;
    return framed > average ? framed : average + (framed - average) / 8;
  }

  /** How many messages make about {@link ReadAhead#BYTES_AHEAD} at {@code average} (0: unknown). */
  public static long count(long average) {
    return average == 0
        ? UNSAMPLED
        : Math.max(ReadAhead.MIN_AHEAD, ReadAhead.BYTES_AHEAD / average);
  }
}
