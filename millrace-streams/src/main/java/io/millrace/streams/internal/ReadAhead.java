package io.millrace.streams.internal;

/**
 * How many messages a blocking reader keeps asked for ahead of itself, so that it rarely waits:
 * about {@value #BYTES_AHEAD} bytes of them by the running average of their size, at least {@value
 * #MIN_AHEAD} and at most {@value #MAX_AHEAD} ({@value #FIRST_REQUEST} before a size is known),
 * asked for again each time half of that has been read. Small messages so get a window deep enough
 * that the reader is not held to the pace of REQUEST_N round trips and wake-ups (a count of 256
 * held an 8-byte reader to half of what 1024 allows, and 1024 to about half of what 4096 does when
 * the reader shares a core with the loop, each wake-up costing two context switches:
 * docs/benchmarks.md), and large ones a few at a time. Credit is counted in messages (RSocket's
 * REQUEST_N), so a stream whose messages suddenly grow may still deliver what was asked for at the
 * old size.
 *
 * <p>The reader's thread only; one per stream. Its use, per message taken: {@link #take()}, and
 * when it returns true, {@link #more(long)} with the message's size.
 */
public final class ReadAhead {
  /** Messages asked for before any has arrived: their size is not known yet. */
  public static final int FIRST_REQUEST = 32;

  /** The most messages asked for ahead of the reader, however small they are. */
  public static final int MAX_AHEAD = 4096;

  /** About how many bytes of messages are asked for ahead of the reader (HTTP/2's usual window). */
  public static final long BYTES_AHEAD = 1 << 20;

  /** The fewest messages asked for ahead, however large: one to read while the next comes. */
  public static final int MIN_AHEAD = 2;

  /** The frame around a message, added to its size: prefix, header, metadata length. */
  static final long FRAMING = 12;

  /**
   * How many times the window may grow from one request to the next. A window sized by the first
   * messages' sizes would otherwise open to {@link #MAX_AHEAD} on a few small messages (a header
   * before large chunks) and have thousands of the chunks sent at once; doubling once per half
   * window, it reaches {@link #MAX_AHEAD} after about 2,000 messages, while a shrinking one takes
   * effect at once.
   */
  static final int GROWTH = 2;

  private long requested = FIRST_REQUEST;
  private long taken;
  private long averageSize; // of the sizes given to more(); 0 until then
  private long lastWindow = FIRST_REQUEST; // of the last request

  /**
   * Counts a message taken by the reader; returns whether a request may be due, which is when more
   * than half of {@link #MAX_AHEAD} is not ahead (above that none can be, and the message's size is
   * not needed: the average comes from the messages read as requests fall due).
   */
  public boolean take() {
    return requested - ++taken <= MAX_AHEAD / 2;
  }

  /**
   * After {@link #take()} returned true: how many more messages to ask for now (counted as asked
   * for), 0 for none; {@code size} is the message's size in bytes, or negative when it is not known
   * (the window then stays at {@link #FIRST_REQUEST}).
   */
  public long more(long size) {
    long ahead = requested - taken;
    long window = Math.min(size < 0 ? FIRST_REQUEST : window(size + FRAMING), GROWTH * lastWindow);
    // One request per half window (a wake-up and a REQUEST_N each), of the last window while it
    // grows: otherwise each message would find less than half of the doubled window ahead.
    if (ahead > Math.min(window, lastWindow) / 2) {
      return 0;
    }
    long more = window - ahead;
    requested += more;
    lastWindow = window;
    return more;
  }

  private int window(long size) {
    averageSize = averageSize == 0 ? size : averageSize + (size - averageSize) / 8;
    return (int) Math.max(MIN_AHEAD, Math.min(MAX_AHEAD, BYTES_AHEAD / averageSize));
  }
}
