package io.millrace.core.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory held for fragmented messages in progress: per connection, and optionally shared by all the
 * connections of a server so that N hostile connections cannot each fill their own allowance.
 * Charged with the capacity of the buffers really held, as they grow.
 *
 * <p>A connection's budget is event-loop confined; the server's is shared through an {@link
 * AtomicLong}, touched only when a fragment arrives or a message completes (not per message).
 */
public final class ReassemblyBudget {
  private final long connectionLimit;
  private final ReassemblyBudget server;
  private final AtomicLong serverHeld;
  private long held;

  ReassemblyBudget(long connectionLimit, ReassemblyBudget server) {
    this.connectionLimit = connectionLimit;
    this.server = server;
    this.serverHeld = null;
  }

  private ReassemblyBudget(long serverLimit) {
    this.connectionLimit = serverLimit;
    this.server = null;
    this.serverHeld = new AtomicLong();
  }

  /** A budget shared by every connection of one server, {@code limit} bytes in all. */
  public static ReassemblyBudget forServer(long limit) {
    if (limit < 64) {
      throw new IllegalArgumentException("server reassembly limit must be at least 64");
    }
    return new ReassemblyBudget(limit);
  }

  /** The server-wide limit, for a server's budget. */
  public long limit() {
    return connectionLimit;
  }

  /** Bytes held right now: this connection's, or the whole server's for a server budget. */
  public long held() {
    return serverHeld != null ? serverHeld.get() : held;
  }

  /**
   * Charges {@code bytes} more. Returns null when it fits, else which limit it breaks (the bytes
   * are not charged then).
   */
  String charge(long bytes) {
    if (held + bytes > connectionLimit) {
      return "fragmented messages in progress exceed the connection's limit of "
          + connectionLimit
          + " bytes";
    }
    if (server != null) {
      long total = server.serverHeld.addAndGet(bytes);
      if (total > server.connectionLimit) {
        server.serverHeld.addAndGet(-bytes);
        return "fragmented messages in progress on this server exceed its limit of "
            + server.connectionLimit
            + " bytes";
      }
    }
    held += bytes;
    return null;
  }

  /** Gives back {@code bytes} charged before. */
  void release(long bytes) {
    if (bytes == 0) {
      return;
    }
    held -= bytes;
    if (server != null) {
      server.serverHeld.addAndGet(-bytes);
    }
  }
}
