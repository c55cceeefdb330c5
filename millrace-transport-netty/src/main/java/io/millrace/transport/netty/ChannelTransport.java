package io.millrace.transport.netty;

import io.millrace.core.Transport;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.concurrent.EventExecutor;

/**
 * A {@link Transport} over a Netty stream channel (TCP, Unix domain socket): frames carry the
 * RSocket 3-byte length prefix, written into the headroom every frame buffer reserves, so a frame
 * is one buffer and one write.
 */
final class ChannelTransport implements Transport {
  private final Channel channel;

  ChannelTransport(Channel channel) {
    this.channel = channel;
  }

  @Override
  public EventExecutor executor() {
    return channel.eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return channel.alloc();
  }

  @Override
  public int headroom() {
    return FrameHeader.LENGTH_PREFIX_SIZE;
  }

  @Override
  public void write(ByteBuf frame) {
    int length = frame.readableBytes() - FrameHeader.LENGTH_PREFIX_SIZE;
    if (length > FrameHeader.MAX_FRAME_LENGTH) {
      frame.release();
      throw new IllegalStateException(
          "frame of " + length + " bytes cannot be framed over TCP (24-bit length)");
    }
    frame.setMedium(frame.readerIndex(), length);
    channel.write(frame, channel.voidPromise());
  }

  @Override
  public boolean coalescesFrames() {
    return true;
  }

  @Override
  public void writeFrames(ByteBuf frames) {
    channel.write(frames, channel.voidPromise());
  }

  @Override
  public void flush() {
    channel.flush();
  }

  @Override
  public boolean isWritable() {
    return channel.isWritable();
  }

  @Override
  public long queuedBytes() {
    ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
    return buffer == null ? 0 : buffer.totalPendingWriteBytes();
  }

  @Override
  public void setReading(boolean reading) {
    channel.config().setAutoRead(reading);
  }

  @Override
  public void close() {
    channel.close();
  }

  @Override
  public String peerAddress() {
    return String.valueOf(channel.remoteAddress());
  }
}
