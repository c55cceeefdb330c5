package io.millrace.bench.millrace;

import io.millrace.bench.jmh.DiscardingTransport;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;

/**
 * One direction of an in-memory connection for single-threaded benchmarks: what the engine writes
 * (frames and batches of frames with their 3-byte length prefixes, as over TCP) waits here until
 * {@link #deliverTo} hands it to the peer's engine as a read. Its executor is Netty's embedded
 * event loop ({@link DiscardingTransport}), which counts every thread as in the loop, so one JMH
 * thread drives both engines; the engines' own tasks run when {@link #deliverTo} runs them. Nothing
 * tells the engine that the pipe closed: whoever made the engines disposes of them.
 */
final class PipeTransport extends DiscardingTransport {
  private final ArrayDeque<ByteBuf> written = new ArrayDeque<>();

  @Override
  public void write(ByteBuf frame) {
    frame.setMedium(frame.readerIndex(), frame.readableBytes() - FrameHeader.LENGTH_PREFIX_SIZE);
    written.add(frame);
  }

  @Override
  public boolean coalescesFrames() {
    return true;
  }

  @Override
  public void writeFrames(ByteBuf frames, int frameCount) {
    written.add(frames);
  }

  @Override
  public void close() {
    super.close(); // runs what is pending, which may still write
    release();
  }

  /**
   * Runs this side's due tasks, then hands every frame written so far to {@code peer} as one read
   * (the frames are lent, as the TCP transport lends them) and ends the read. Returns the frames
   * delivered.
   */
  int deliverTo(ConnectionEngine peer) {
    channel.runPendingTasks();
    channel.checkException(); // a task's failure (the embedded loop keeps it) fails the benchmark
    if (written.isEmpty()) {
      return 0;
    }
    int frames = 0;
    ByteBuf b;
    while ((b = written.poll()) != null) {
      try {
        while (b.isReadable()) {
          int length = b.readUnsignedMedium();
          peer.onFrame(b.readSlice(length));
          frames++;
        }
      } finally {
        b.release();
      }
    }
    peer.onReadComplete();
    return frames;
  }

  /** Releases what was written and never delivered. */
  void release() {
    ByteBuf b;
    while ((b = written.poll()) != null) {
      b.release();
    }
  }
}
