package io.millrace.transport.netty;

import io.millrace.core.internal.Transport;
import io.millrace.core.internal.TransportListener;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Transport} over a Netty channel. Over a byte stream (TCP, TLS, Unix domain socket,
 * in-JVM) frames carry the RSocket 3-byte length prefix, written into the headroom every frame
 * buffer reserves, so a frame is one buffer and one write. Over WebSocket ({@code messages}) each
 * frame is one binary message without a prefix, and a graceful close ends with the WebSocket
 * closing handshake.
 *
 * <p>A graceful close waits for the last write to reach the socket (Netty's {@code close()} alone
 * discards what is still queued), then shuts the output down so the peer reads every frame and then
 * the end of the stream, and closes when the peer closes its side too, or at the deadline. Closing
 * with unread input would make the kernel send a reset, which can destroy frames the peer had
 * received but not yet read.
 */
final class ChannelTransport implements Transport {
  private final Channel channel;
  private final FrameHandler handler;
  private final boolean messages;
  private boolean closing;
  private boolean closeSent;

  ChannelTransport(Channel channel, FrameHandler handler, boolean messages) {
    this.channel = channel;
    this.handler = handler;
    this.messages = messages;
  }

  @Override
  public void setListener(TransportListener listener) {
    handler.setListener(listener);
  }

  @Override
  public void moveTo(EventExecutor executor, Runnable then) {
    if (executor == channel.eventLoop()) {
      executor.execute(then);
      return;
    }
    channel
        .deregister()
        .addListener(
            deregistered -> {
              if (!deregistered.isSuccess()) {
                channel.close();
                return;
              }
              ((io.netty.channel.EventLoop) executor)
                  .register(channel)
                  .addListener(
                      registered -> {
                        if (registered.isSuccess() && channel.isActive()) {
                          then.run();
                        } else {
                          channel.close();
                        }
                      });
            });
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
    return messages ? 0 : FrameHeader.LENGTH_PREFIX_SIZE;
  }

  @Override
  public void write(ByteBuf frame) {
    if (messages) {
      channel.write(new BinaryWebSocketFrame(frame), channel.voidPromise());
      return;
    }
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
    return !messages;
  }

  @Override
  public void writeFrames(ByteBuf frames, int frameCount) {
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
    handler.setReading(reading);
  }

  @Override
  public void close() {
    closing = true;
    channel.close();
  }

  /** Whether a close has begun (the handler then closes on the peer's end of stream). */
  boolean isClosing() {
    return closing;
  }

  /** Whether a graceful close over WebSocket has written its Close message. */
  boolean isCloseSent() {
    return closeSent;
  }

  /** Whether a graceful close has shut the output down (everything written is out). */
  boolean isOutputShutdown() {
    return channel instanceof DuplexChannel && ((DuplexChannel) channel).isOutputShutdown();
  }

  @Override
  public void closeGracefully(long timeoutMillis) {
    if (closing) {
      return;
    }
    closing = true;
    if (!channel.isActive()) {
      channel.close();
      return;
    }
    handler.discardInput();
    ScheduledFuture<?> force =
        channel.eventLoop().schedule(() -> channel.close(), timeoutMillis, TimeUnit.MILLISECONDS);
    channel.closeFuture().addListener(f -> force.cancel(false));
    if (messages) {
      closeWebSocket();
      return;
    }
    // An empty write completes once everything written before it has reached the socket.
    channel
        .writeAndFlush(Unpooled.EMPTY_BUFFER)
        .addListener(
            (ChannelFuture written) -> {
              if (!written.isSuccess() || !(channel instanceof DuplexChannel)) {
                channel.close();
                return;
              }
              DuplexChannel duplex = (DuplexChannel) channel;
              if (duplex.isInputShutdown()) {
                channel.close(); // the peer is done too
                return;
              }
              duplex
                  .shutdownOutput()
                  .addListener(
                      shut -> {
                        if (!shut.isSuccess()) {
                          channel.close();
                        }
                      });
            });
  }

  /**
   * Sends the WebSocket Close after everything written, then closes once the peer's Close arrives
   * (the handler sees it), at once if the peer closed first, or at the deadline.
   */
  private void closeWebSocket() {
    channel
        .writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.NORMAL_CLOSURE))
        .addListener(
            (ChannelFuture written) -> {
              closeSent = true;
              if (!written.isSuccess() || handler.peerClosed()) {
                channel.close();
              }
            });
  }

  @Override
  public SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }

  @Override
  public SocketAddress localAddress() {
    return channel.localAddress();
  }
}
