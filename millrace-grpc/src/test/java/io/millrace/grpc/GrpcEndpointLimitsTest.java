package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a misbehaving HTTP/2 peer gets from {@link GrpcEndpoint}, seen from the bytes, with a raw
 * HTTP/2 client (Netty's frame codec) rather than a gRPC client that would never misbehave: a wrong
 * content type, the concurrent-call limit in SETTINGS, a rapid-reset flood, and keepalive ping
 * abuse.
 */
class GrpcEndpointLimitsTest {
  private GrpcEndpoint endpoint;
  private EventLoopGroup group;
  private Channel connection;
  private final CompletableFuture<Http2SettingsFrame> settings = new CompletableFuture<>();
  private final CompletableFuture<Http2GoAwayFrame> goAway = new CompletableFuture<>();

  @BeforeEach
  void start() throws Exception {
    RpcServer rpc =
        RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build();
    endpoint =
        GrpcEndpoint.builder(rpc).address(new java.net.InetSocketAddress("127.0.0.1", 0)).start();
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    connection =
        RawHttp2.connect(
            group,
            endpoint.port(),
            Http2Settings.defaultSettings(),
            new ChannelInboundHandlerAdapter() {
              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Http2SettingsFrame s) {
                  settings.complete(s);
                } else if (msg instanceof Http2GoAwayFrame g) {
                  goAway.complete(g.retainedDuplicate());
                }
                ReferenceCountUtil.release(msg);
              }
            });
  }

  @AfterEach
  void stop() throws Exception {
    connection.close().sync();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    endpoint.close();
    goAway.thenAccept(ReferenceCountUtil::release);
  }

  private Http2StreamChannel newStream(CompletableFuture<Http2Headers> responseHeaders)
      throws Exception {
    return new Http2StreamChannelBootstrap(connection)
        .handler(
            new ChannelInboundHandlerAdapter() {
              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof Http2HeadersFrame h) {
                  responseHeaders.complete(h.headers());
                }
                ReferenceCountUtil.release(msg);
              }
            })
        .open()
        .sync()
        .getNow();
  }

  private static Http2Headers request(String contentType) {
    return new DefaultHttp2Headers()
        .method("POST")
        .scheme("http")
        .path("/millrace.echo.v1.EchoService/Echo")
        .authority("127.0.0.1")
        .add("content-type", contentType)
        .add("te", "trailers");
  }

  @Test
  void aWrongContentType_isHttp415() throws Exception {
    CompletableFuture<Http2Headers> response = new CompletableFuture<>();
    Http2StreamChannel stream = newStream(response);
    stream.writeAndFlush(new DefaultHttp2HeadersFrame(request("text/plain"), true)).sync();
    assertThat(response.get(10, TimeUnit.SECONDS).status().toString()).isEqualTo("415");
  }

  @Test
  void theServerAnnouncesItsConcurrentCallLimit() throws Exception {
    assertThat(settings.get(10, TimeUnit.SECONDS).settings().maxConcurrentStreams())
        .isEqualTo((long) GrpcEndpoint.DEFAULT_MAX_CONCURRENT_CALLS);
  }

  @Test
  void aRapidResetFlood_closesTheConnection() throws Exception {
    // Open a call and reset it at once, more often than the endpoint allows in its window.
    ByteBuf empty = Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 0, 0});
    try {
      for (int i = 0; i < GrpcEndpoint.DEFAULT_MAX_RST_FRAMES + 100 && !goAway.isDone(); i++) {
        Http2StreamChannel stream;
        try {
          stream = newStream(new CompletableFuture<>());
        } catch (Exception closed) {
          if (connection.isActive()) {
            throw closed;
          }
          break; // the server closed the connection after its GOAWAY
        }
        stream.write(new DefaultHttp2HeadersFrame(request("application/grpc"), false));
        stream.writeAndFlush(new DefaultHttp2DataFrame(empty.retainedDuplicate(), false));
        stream.close(); // an open stream closed from here is an RST_STREAM(CANCEL)
      }
    } finally {
      empty.release();
    }
    // The server closes the connection. Its GOAWAY may not be read: it closes with our flood still
    // unread in its socket, and the reset that makes can discard the GOAWAY before we read it.
    assertThat(connection.closeFuture().await(10, TimeUnit.SECONDS))
        .as("the server closed the connection")
        .isTrue();
    if (goAway.isDone()) {
      assertThat(goAway.get().errorCode()).isEqualTo(0xb); // ENHANCE_YOUR_CALM
    }
  }

  @Test
  void pingAbuse_isToldToCalmDown() throws Exception {
    // grpc-java allows two pings too early and answers the third with GOAWAY; the pause lets the
    // GOAWAY arrive before another ping could meet a closed socket (whose reset could lose it).
    for (int i = 0; i < 10 && !goAway.isDone(); i++) {
      connection.writeAndFlush(new DefaultHttp2PingFrame(i)).sync();
      Thread.sleep(100);
    }
    Http2GoAwayFrame g = goAway.get(10, TimeUnit.SECONDS);
    assertThat(g.errorCode()).isEqualTo(0xb); // ENHANCE_YOUR_CALM
    assertThat(g.content().toString(StandardCharsets.US_ASCII)).isEqualTo("too_many_pings");
  }
}
