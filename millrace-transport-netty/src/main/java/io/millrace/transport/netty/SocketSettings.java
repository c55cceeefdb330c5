package io.millrace.transport.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import java.util.Objects;

/** The socket settings the client and server builders share, validated as they are set. */
final class SocketSettings {
  private static final System.Logger LOG = System.getLogger(SocketSettings.class.getName());

  int eventLoopThreads = 1;
  WriteBufferWaterMark waterMark = new WriteBufferWaterMark(128 * 1024, 256 * 1024);
  ByteBufAllocator allocator = ByteBufAllocator.DEFAULT;

  /**
   * SO_SNDBUF and SO_RCVBUF of Unix socket connections; 0 leaves the kernel's default. Linux's
   * default (about 200 KiB) holds less than a busy connection keeps in flight: request-response at
   * 512 bytes with 1,024 calls outstanding ran at 81 % of TCP with it and 118 % with 1 MiB
   * (docs/benchmarks.md). TCP needs none of this: loopback TCP sizes its buffers itself.
   */
  int unixSocketBuffer = 1024 * 1024;

  private IoKind ioKind;

  void eventLoopThreads(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("event loop threads must be positive");
    }
    this.eventLoopThreads = threads;
  }

  void unixSocketBuffer(int bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("a socket buffer size cannot be negative");
    }
    this.unixSocketBuffer = bytes;
  }

  void waterMarks(int low, int high) {
    this.waterMark = new WriteBufferWaterMark(low, high);
  }

  /** A snapshot, so that a builder reused after {@code build()} cannot change a built client. */
  SocketSettings copy() {
    SocketSettings copy = new SocketSettings();
    copy.eventLoopThreads = eventLoopThreads;
    copy.waterMark = waterMark;
    copy.allocator = allocator;
    copy.unixSocketBuffer = unixSocketBuffer;
    copy.ioKind = ioKind;
    return copy;
  }

  void ioKind(IoKind kind) {
    this.ioKind = Objects.requireNonNull(kind);
  }

  /**
   * The kind set, else the preferred one. The preferred kind is logged when it is first chosen; a
   * kind set on a builder is logged here when it is not that one (so the kind a server or client
   * runs on is always in the log, once for the default and once per builder that overrides it).
   */
  IoKind ioKind() {
    if (ioKind == null) {
      return IoKind.preferred();
    }
    if (ioKind != IoKind.chosenPreferred()) {
      LOG.log(System.Logger.Level.INFO, "socket I/O: {0} (set on the builder)", ioKind);
    }
    return ioKind;
  }

  void allocator(ByteBufAllocator allocator) {
    this.allocator = Objects.requireNonNull(allocator);
  }
}
