package io.millrace.grpc;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;

/**
 * A bare HTTP/2 client connection from Netty's frame codec, for tests that misbehave as a caller.
 */
final class RawHttp2 {
  private RawHttp2() {}

  /**
   * Connects to {@code 127.0.0.1:port} with {@code settings}, pings acknowledged; streams are
   * opened with {@code Http2StreamChannelBootstrap}, and frames on the connection itself reach
   * {@code connectionFrames} (which releases them).
   */
  static Channel connect(
      EventLoopGroup group, int port, Http2Settings settings, ChannelHandler connectionFrames)
      throws InterruptedException {
    return new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                ch.pipeline()
                    .addLast(
                        Http2FrameCodecBuilder.forClient()
                            .autoAckPingFrame(true)
                            .initialSettings(settings)
                            .build(),
                        new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()),
                        connectionFrames);
              }
            })
        .connect("127.0.0.1", port)
        .sync()
        .channel();
  }
}
