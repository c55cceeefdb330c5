package io.millrace.transport.netty;

import io.millrace.frame.FrameHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;

/**
 * A peer for {@link TransportSuite} that speaks raw frames over any transport URI: it does the TLS
 * handshake and the WebSocket upgrade with the client's own handlers, then sends and reads RSocket
 * frames as the transport frames them (a length prefix on streams, one binary message each over
 * WebSocket), and can write bytes under the WebSocket framing to play a broken peer.
 */
final class NettyRawPeer implements TransportSuite.RawPeer {
  private static final Object END = new Object();

  private final EventLoopGroup group;
  private final Channel channel;
  private final boolean messages;
  private final BlockingQueue<Object> inbound;
  private boolean ended;

  private NettyRawPeer(
      EventLoopGroup group, Channel channel, boolean messages, BlockingQueue<Object> inbound) {
    this.group = group;
    this.channel = channel;
    this.messages = messages;
    this.inbound = inbound;
  }

  static NettyRawPeer open(TransportUri uri, IoKind kind, ClientTls tls) throws Exception {
    EventLoopGroup group = EventLoops.newGroup(kind, 1, "raw-peer");
    // Lock-free offers: the peer's event loop never waits on the test thread that polls.
    BlockingQueue<Object> inbound = new LinkedTransferQueue<>();
    ChannelPromise[] ready = new ChannelPromise[1];
    boolean messages = uri.scheme().webSocket();
    Bootstrap bootstrap =
        new Bootstrap()
            .group(group)
            .channel(kind.clientChannel(uri.scheme() == TransportUri.Scheme.UNIX))
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ready[0] =
                        ClientPipelines.addHandshakes(
                            ch, uri, tls, WebSocketOptions.DEFAULT, 16 << 20, 5000);
                    SslHandler ssl = ch.pipeline().get(SslHandler.class);
                    if (ssl != null) {
                      ch.pipeline().addAfter(ch.pipeline().context(ssl).name(), "tap", new Tap());
                    } else {
                      ch.pipeline().addFirst("tap", new Tap());
                    }
                    ch.pipeline().addLast(new Collector(inbound, messages));
                  }
                });
    if (uri.scheme().ip()) {
      bootstrap.option(ChannelOption.TCP_NODELAY, true);
    }
    try {
      java.net.SocketAddress address = uri.socketAddress(kind);
      if (address instanceof java.net.InetSocketAddress) {
        java.net.InetSocketAddress inet = (java.net.InetSocketAddress) address;
        address = new java.net.InetSocketAddress(inet.getHostString(), inet.getPort());
      }
      Channel channel = bootstrap.connect(address).sync().channel();
      if (!ready[0].await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("no handshake within 10 s");
      }
      if (!ready[0].isSuccess()) {
        channel.close();
        throw new java.io.IOException("handshake failed: " + ready[0].cause(), ready[0].cause());
      }
      return new NettyRawPeer(group, channel, messages, inbound);
    } catch (Exception | Error e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
  }

  @Override
  public void send(ByteBuf frame) throws Exception {
    if (messages) {
      channel.writeAndFlush(new BinaryWebSocketFrame(frame)).sync();
      return;
    }
    ByteBuf prefix = Unpooled.buffer(3).writeMedium(frame.readableBytes());
    channel.writeAndFlush(Unpooled.wrappedBuffer(prefix, frame)).sync();
  }

  /** Sends one frame as a WebSocket message in {@code parts} fragments (continuation frames). */
  void sendFragmented(ByteBuf frame, int parts) throws Exception {
    int size = (frame.readableBytes() + parts - 1) / parts;
    for (int i = 0; i < parts; i++) {
      ByteBuf part = frame.readRetainedSlice(Math.min(size, frame.readableBytes()));
      boolean last = i == parts - 1;
      channel.write(
          i == 0
              ? new BinaryWebSocketFrame(last, 0, part)
              : new io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame(
                  last, 0, part));
    }
    frame.release();
    channel.flush();
  }

  /** Sends a text message (which RSocket does not use). */
  void sendText(String text) throws Exception {
    channel
        .writeAndFlush(new io.netty.handler.codec.http.websocketx.TextWebSocketFrame(text))
        .sync();
  }

  @Override
  public void sendRaw(byte[] bytes) throws Exception {
    Tap tap = channel.pipeline().get(Tap.class);
    channel
        .eventLoop()
        .submit(() -> tap.ctx.writeAndFlush(Unpooled.wrappedBuffer(bytes)))
        .sync()
        .getNow()
        .sync();
  }

  @Override
  public void sendFrames(byte[] lengthPrefixedFrames) throws Exception {
    // Hold back while the channel is not writable: a peer the server stops reading stalls here.
    while (!channel.isWritable()) {
      if (!channel.isActive()) {
        throw new java.io.IOException("closed");
      }
      Thread.sleep(1);
    }
    if (!messages) {
      channel.writeAndFlush(Unpooled.wrappedBuffer(lengthPrefixedFrames));
      return;
    }
    ByteBuf all = Unpooled.wrappedBuffer(lengthPrefixedFrames);
    while (all.readableBytes() >= FrameHeader.LENGTH_PREFIX_SIZE) {
      int length = all.readUnsignedMedium();
      channel.write(new BinaryWebSocketFrame(Unpooled.copiedBuffer(all.readSlice(length))));
    }
    channel.flush();
  }

  @Override
  public ByteBuf read(Duration timeout) throws Exception {
    if (ended) {
      return null;
    }
    Object next = inbound.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (next == null) {
      throw new AssertionError("nothing read within " + timeout);
    }
    if (next == END) {
      ended = true;
      return null;
    }
    return (ByteBuf) next;
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    for (Object o; (o = inbound.poll()) != null; ) {
      ReferenceCountUtil.release(o);
    }
  }

  /** Writes below the WebSocket framing (above TLS). */
  private static final class Tap extends ChannelDuplexHandler {
    ChannelHandlerContext ctx;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }
  }

  /** Splits what arrives into frames, heap copies, and marks the end of the connection. */
  private static final class Collector extends ChannelInboundHandlerAdapter {
    private final BlockingQueue<Object> inbound;
    private final boolean messages;
    private ByteBuf cumulation = Unpooled.buffer();
    private boolean closed;

    Collector(BlockingQueue<Object> inbound, boolean messages) {
      this.inbound = inbound;
      this.messages = messages;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (closed) {
          return;
        }
        if (messages) {
          if (msg instanceof BinaryWebSocketFrame) {
            inbound.add(Unpooled.copiedBuffer(((BinaryWebSocketFrame) msg).content()));
          } else if (msg instanceof CloseWebSocketFrame) {
            end();
          }
          return;
        }
        cumulation.writeBytes((ByteBuf) msg);
        while (cumulation.readableBytes() >= 3
            && cumulation.readableBytes()
                >= 3 + cumulation.getUnsignedMedium(cumulation.readerIndex())) {
          int length = cumulation.readUnsignedMedium();
          inbound.add(Unpooled.copiedBuffer(cumulation.readSlice(length)));
        }
        cumulation.discardReadBytes();
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      end();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
        end();
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      end();
      ctx.close();
    }

    private void end() {
      if (!closed) {
        closed = true;
        inbound.add(END);
      }
    }
  }
}
