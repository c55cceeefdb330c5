package io.millrace.bench.jmh;

import io.millrace.core.internal.Transport;
import io.millrace.core.internal.TransportListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import java.net.SocketAddress;

/**
 * A transport that releases every frame written: isolates the engine's own cost. Its executor is
 * Netty's embedded event loop, which counts every thread as "in the loop", so a JMH thread can
 * drive the engine directly. Open for transports that do something else with what is written
 * ({@code PipeTransport}).
 */
public class DiscardingTransport implements Transport {
  protected final EmbeddedChannel channel = new EmbeddedChannel();
  long framesWritten;

  @Override
  public void setListener(TransportListener listener) {
    // nothing arrives
  }

  @Override
  public EventExecutor executor() {
    return channel.eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return ByteBufAllocator.DEFAULT;
  }

  @Override
  public int headroom() {
    return 3;
  }

  @Override
  public void write(ByteBuf frame) {
    framesWritten++;
    frame.release();
  }

  @Override
  public void flush() {}

  @Override
  public boolean isWritable() {
    return true;
  }

  @Override
  public long queuedBytes() {
    return 0;
  }

  @Override
  public void setReading(boolean reading) {}

  @Override
  public void close() {
    channel.close();
  }

  @Override
  public void closeGracefully(long timeoutMillis) {
    close();
  }

  @Override
  public SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }

  @Override
  public SocketAddress localAddress() {
    return channel.localAddress();
  }

  /** Runs the tasks the engine queued (scheduled flushes). */
  void runPendingTasks() {
    channel.runPendingTasks();
  }
}
