package io.millrace.transport.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import java.util.Objects;

/** The socket settings the client and server builders share, validated as they are set. */
final class SocketSettings {
  int eventLoopThreads = 1;
  WriteBufferWaterMark waterMark = new WriteBufferWaterMark(128 * 1024, 256 * 1024);
  ByteBufAllocator allocator = ByteBufAllocator.DEFAULT;
  private IoKind ioKind;

  void eventLoopThreads(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("event loop threads must be positive");
    }
    this.eventLoopThreads = threads;
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
    copy.ioKind = ioKind;
    return copy;
  }

  void ioKind(IoKind kind) {
    this.ioKind = Objects.requireNonNull(kind);
  }

  /** The kind set, else the preferred one. */
  IoKind ioKind() {
    return ioKind != null ? ioKind : IoKind.preferred();
  }

  void allocator(ByteBufAllocator allocator) {
    this.allocator = Objects.requireNonNull(allocator);
  }
}
