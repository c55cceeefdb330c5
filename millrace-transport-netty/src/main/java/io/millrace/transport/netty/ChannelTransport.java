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
  private final boolean client;
  private boolean closing;
  private boolean closeSent;

  /**
   * Over WebSocket, small frames written since the last flush, copied together: one buffer per
   * flush instead of one per frame, as the engine batches frames over TCP.
   */
  private ByteBuf batch;

  private static final int BATCHED_FRAME_MAX = 1024;
  private static final int BATCH_CAPACITY = 16 * 1024;

  ChannelTransport(Channel channel, FrameHandler handler, boolean messages, boolean client) {
    this.channel = channel;
    this.handler = handler;
    this.messages = messages;
    this.client = client;
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
    if (messages) {
      return client ? WebSocketFraming.CLIENT_HEADROOM : WebSocketFraming.SERVER_HEADROOM;
    }
    return FrameHeader.LENGTH_PREFIX_SIZE;
  }

  @Override
  public void write(ByteBuf frame) {
    if (messages) {
      WebSocketFraming.frame(frame, headroom(), WebSocketFraming.OPCODE_BINARY, client);
      int size = frame.readableBytes();
      if (size > BATCHED_FRAME_MAX) {
        writeBatch();
        channel.write(frame, channel.voidPromise());
        return;
      }
      if (batch != null && batch.writableBytes() < size) {
        writeBatch();
      }
      if (batch == null) {
        batch = channel.alloc().directBuffer(BATCH_CAPACITY);
      }
      batch.writeBytes(frame);
      frame.release();
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
    writeBatch();
    channel.flush();
  }

  private void writeBatch() {
    ByteBuf b = batch;
    if (b != null) {
      batch = null;
      channel.write(b, channel.voidPromise());
    }
  }

  @Override
  public boolean isWritable() {
    return channel.isWritable();
  }

  @Override
  public long queuedBytes() {
    ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
    long batched = batch == null ? 0 : batch.readableBytes();
    return batched + (buffer == null ? 0 : buffer.totalPendingWriteBytes());
  }

  @Override
  public void setReading(boolean reading) {
    handler.setReading(reading);
  }

  @Override
  public void close() {
    closing = true;
    releaseBatch();
    channel.close();
  }

  /** Drops frames batched and not yet written (the connection is gone). */
  void releaseBatch() {
    if (batch != null) {
      batch.release();
      batch = null;
    }
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
    writeBatch();
    channel
        .writeAndFlush(close(WebSocketCloseStatus.NORMAL_CLOSURE))
        .addListener(
            (ChannelFuture written) -> {
              closeSent = true;
              if (!written.isSuccess() || handler.peerClosed()) {
                channel.close();
              }
            });
  }

  /** A WebSocket Close with {@code status}, framed for this side. */
  private ByteBuf close(WebSocketCloseStatus status) {
    ByteBuf code = Unpooled.buffer(2).writeShort(status.code());
    return WebSocketFraming.control(channel.alloc(), WebSocketFraming.OPCODE_CLOSE, code, client);
  }

  /** Sends a WebSocket control frame (a pong) with {@code payload} (not released). */
  void writeControl(int opcode, ByteBuf payload) {
    writeBatch();
    channel.writeAndFlush(
        WebSocketFraming.control(channel.alloc(), opcode, payload, client), channel.voidPromise());
  }

  /** A WebSocket protocol violation: a Close with {@code status}, then the connection closes. */
  void closeWith(WebSocketCloseStatus status) {
    closing = true;
    writeBatch();
    channel.writeAndFlush(close(status)).addListener(f -> channel.close());
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
