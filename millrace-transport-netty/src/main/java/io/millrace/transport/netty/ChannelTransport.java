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
import io.netty.handler.ssl.SslHandler;
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

  /** Null until looked at, then the TLS session once its handshake is done, or {@link #NO_TLS}. */
  private volatile Object tls;

  private static final Object NO_TLS = new Object();
  private final FrameHandler handler;
  private final boolean messages;
  private final boolean client;
  private boolean closing;
  private boolean closeSent;

  /** Over WebSocket: a Close is out or on its way; nothing may follow it. */
  private boolean closeQueued;

  /** Over WebSocket: a pong is written and not yet out (pings are not answered meanwhile). */
  private boolean pongPending;

  /**
   * Over WebSocket, the small frames written since the last flush: the first alone ({@link #lone},
   * as framed), then, from the second, copied together into {@link #batch}: one buffer per flush
   * instead of one per frame, as the engine batches frames over TCP. The batch starts small and
   * grows, so that the bytes queued stay close to what the write-buffer water marks count.
   */
  private ByteBuf lone;

  private ByteBuf batch;

  private static final int BATCHED_FRAME_MAX = 1024;
  private static final int BATCH_CAPACITY = 16 * 1024;

  ChannelTransport(Channel channel, FrameHandler handler, boolean messages, boolean client) {
    this.channel = channel;
    this.handler = handler;
    this.messages = messages;
    this.client = client;
  }

  /** The channel under this transport. */
  Channel channel() {
    return channel;
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
      writeMessage(frame);
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

  /** One frame as one binary WebSocket message, alone or into the batch. */
  private void writeMessage(ByteBuf frame) {
    try {
      if (closeQueued) {
        return; // RFC 6455: nothing after a Close
      }
      int headroom = headroom();
      int payload = frame.readableBytes() - headroom;
      int size = WebSocketFraming.headerLength(payload, client) + payload;
      if (size > BATCHED_FRAME_MAX || lone == null && batch == null) {
        if (size > BATCHED_FRAME_MAX) {
          writeBatch();
        }
        ByteBuf framed = framed(frame, headroom, size);
        if (size > BATCHED_FRAME_MAX) {
          channel.write(framed, channel.voidPromise());
        } else {
          lone = framed;
        }
        return;
      }
      if (batch != null && batch.maxWritableBytes() < size) {
        writeBatch();
        lone = framed(frame, headroom, size);
        return;
      }
      if (batch == null) {
        int first = lone.readableBytes();
        batch =
            channel
                .alloc()
                .directBuffer(
                    Math.min(BATCH_CAPACITY, Math.max(256, 4 * (first + size))), BATCH_CAPACITY);
        batch.writeBytes(lone);
        lone.release();
        lone = null;
      }
      if (client) {
        WebSocketFraming.writeMasked(frame, headroom, WebSocketFraming.OPCODE_BINARY, batch);
      } else {
        WebSocketFraming.frame(frame, headroom, WebSocketFraming.OPCODE_BINARY);
        batch.writeBytes(frame);
      }
    } finally {
      if (frame.refCnt() > 0) {
        frame.release();
      }
    }
  }

  /**
   * {@code frame} framed as a message of its own: a server's in place (retained, the caller
   * releases its reference), a client's masked into a new buffer of {@code size}.
   */
  private ByteBuf framed(ByteBuf frame, int headroom, int size) {
    if (client) {
      ByteBuf out = channel.alloc().directBuffer(size);
      WebSocketFraming.writeMasked(frame, headroom, WebSocketFraming.OPCODE_BINARY, out);
      return out;
    }
    WebSocketFraming.frame(frame, headroom, WebSocketFraming.OPCODE_BINARY);
    return frame.retain();
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
    ByteBuf l = lone;
    if (l != null) {
      lone = null;
      channel.write(l, channel.voidPromise());
    }
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
    // Called from any thread (a caller's hand-off checks it): each loop-owned field is read once,
    // since the loop may clear it between a check and a use. An estimate, as the interface says.
    ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
    ByteBuf b = batch;
    ByteBuf l = lone;
    long batched = (b == null ? 0 : b.readableBytes()) + (l == null ? 0 : l.readableBytes());
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
    if (lone != null) {
      lone.release();
      lone = null;
    }
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
      // Closing already (a protocol violation's Close under way): bounded all the same.
      channel.eventLoop().schedule(() -> channel.close(), timeoutMillis, TimeUnit.MILLISECONDS);
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
              shutdownOutput(duplex);
            });
  }

  private void shutdownOutput(DuplexChannel duplex) {
    duplex
        .shutdownOutput()
        .addListener(
            shut -> {
              if (!shut.isSuccess()) {
                channel.close();
              }
            });
  }

  /**
   * Sends the WebSocket Close after everything written, then closes once the peer's Close arrives
   * (the handler sees it), at once if the peer closed first, or at the deadline.
   */
  private void closeWebSocket() {
    writeBatch();
    closeQueued = true;
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
    if (closeQueued || pongPending || !channel.isWritable()) {
      return; // a peer that pings faster than it reads gets no more than one pong at a time
    }
    pongPending = true;
    writeBatch();
    channel
        .writeAndFlush(WebSocketFraming.control(channel.alloc(), opcode, payload, client))
        .addListener(f -> pongPending = false);
  }

  /** A WebSocket protocol violation: a Close with {@code status}, then the connection closes. */
  void closeWith(WebSocketCloseStatus status) {
    if (closeQueued) {
      channel.close();
      return;
    }
    closing = true;
    writeBatch();
    closeQueued = true;
    channel.writeAndFlush(close(status)).addListener(f -> channel.close());
    // A peer that does not read would hold the Close back for ever.
    channel
        .eventLoop()
        .schedule(() -> channel.close(), VIOLATION_CLOSE_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** How long a Close after a protocol violation may take to reach the peer. */
  private static final long VIOLATION_CLOSE_MILLIS = 5000;

  @Override
  public SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }

  @Override
  public SocketAddress localAddress() {
    return channel.localAddress();
  }

  /** The session of the channel's {@link SslHandler} once its handshake has succeeded. */
  @Override
  public javax.net.ssl.SSLSession tlsSession() {
    Object known = tls;
    if (known == null) {
      SslHandler ssl = channel.pipeline().get(SslHandler.class);
      if (ssl == null) {
        tls = NO_TLS; // a connection does not start TLS later
        return null;
      }
      if (!ssl.handshakeFuture().isSuccess()) {
        return null; // not yet: asked again next time
      }
      known = ssl.engine().getSession();
      tls = known;
    }
    return known instanceof javax.net.ssl.SSLSession session ? session : null;
  }
}
