package io.millrace.transport.netty;

import io.millrace.core.Acceptor;
import io.millrace.core.AsyncAcceptor;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.core.internal.ReassemblyBudget;
import io.millrace.core.internal.ResumeSessions;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.ErrorFrame;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How a {@link MillraceServer} turns an accepted channel into a served connection: admission
 * against the connection limit, TLS, then, on ports shared by several protocols, a look at the
 * first bytes to tell RSocket from a WebSocket upgrade and from HTTP/2, and finally an engine.
 *
 * <p>Until an engine takes over (it has its own SETUP timeout), the connection must finish its TLS
 * handshake, say which protocol it speaks and complete a WebSocket upgrade within the SETUP
 * timeout, or it is closed.
 */
final class ServerPipelines {
  private static final System.Logger LOG = System.getLogger(MillraceServer.class.getName());
  private static final AttributeKey<ScheduledFuture<?>> DEADLINE =
      AttributeKey.valueOf(ServerPipelines.class, "millrace.deadline");

  /** The first four bytes of an HTTP/1.1 GET and of the HTTP/2 connection preface. */
  private static final int GET = 0x47455420;

  private static final int PRI = 0x50524920;

  /** The largest HTTP upgrade request read before the WebSocket handshake. */
  private static final int MAX_UPGRADE_REQUEST_BYTES = 16 * 1024;

  private final ConnectionConfig config;
  private final Acceptor acceptor;
  private final AsyncAcceptor asyncAcceptor;
  private final ReassemblyBudget budget;
  private final ResumeSessions sessions;
  private final ConnectionGroup connections;
  private final int maxConnections;
  private final AtomicInteger admitted = new AtomicInteger();
  private final ServerTls tls;
  private final WebSocketOptions webSocket;
  private final String sharedWebSocketPath;
  private final Http2Handoff http2;
  private final List<String> alpn;

  ServerPipelines(
      ConnectionConfig config,
      Acceptor acceptor,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget budget,
      ResumeSessions sessions,
      ConnectionGroup connections,
      int maxConnections,
      ServerTls tls,
      WebSocketOptions webSocket,
      String sharedWebSocketPath,
      Http2Handoff http2) {
    this.config = config;
    this.acceptor = acceptor;
    this.asyncAcceptor = asyncAcceptor;
    this.budget = budget;
    this.sessions = sessions;
    this.connections = connections;
    this.maxConnections = maxConnections;
    this.tls = tls;
    this.webSocket = webSocket;
    this.sharedWebSocketPath = sharedWebSocketPath;
    this.http2 = http2;
    this.alpn = http2 == null ? List.of("http/1.1") : List.of("h2", "http/1.1");
  }

  /** Makes the TLS contexts the listeners use, before any connection needs one. */
  void prepareTls() throws java.io.IOException {
    if (tls != null) {
      tls.prepare(List.of("http/1.1"));
      tls.prepare(alpn);
    }
  }

  /** Sets up a channel accepted on {@code listener}. */
  void init(Channel channel, TransportUri listener) {
    // Reserved atomically: the worker loops accept concurrently.
    if (admitted.incrementAndGet() > maxConnections) {
      admitted.decrementAndGet();
      refuse(channel, listener);
      return;
    }
    channel.closeFuture().addListener(f -> admitted.decrementAndGet());
    TransportUri.Scheme scheme = listener.scheme();
    long timeout = config.setupTimeout().toMillis();
    channel
        .attr(DEADLINE)
        .set(channel.eventLoop().schedule(() -> expire(channel), timeout, TimeUnit.MILLISECONDS));
    ChannelPipeline pipeline = channel.pipeline();
    if (scheme.secure()) {
      SslHandler ssl =
          tls.context(scheme.webSocket() ? List.of("http/1.1") : alpn).newHandler(channel.alloc());
      ssl.setHandshakeTimeoutMillis(timeout);
      pipeline.addLast(ssl);
    }
    if (scheme.webSocket()) {
      serveWebSocket(channel, listener.path());
    } else {
      pipeline.addLast(new ProtocolDetector());
    }
  }

  private void expire(Channel channel) {
    LOG.log(
        Level.DEBUG,
        "closing {0}: no protocol set up within {1} ms",
        channel.remoteAddress(),
        config.setupTimeout().toMillis());
    ChannelPipeline pipeline = channel.pipeline();
    SslHandler ssl = pipeline.get(SslHandler.class);
    if (pipeline.get(ProtocolDetector.class) != null
        && (ssl == null || ssl.handshakeFuture().isSuccess())) {
      // Silent where RSocket may be spoken: answered as an engine answers a missing SETUP.
      errorAndClose(channel, ErrorCode.INVALID_SETUP, "no SETUP within " + config.setupTimeout());
    } else {
      channel.close();
    }
  }

  /**
   * Asks a connection handed to the gRPC endpoint to end with its calls (GOAWAY); the drain timeout
   * bounds it, as it bounds an RSocket connection's graceful close.
   */
  private void closeGracefully(Channel channel) {
    http2.closeGracefully(channel);
    try {
      channel
          .eventLoop()
          .schedule(
              () -> {
                channel.close();
              },
              config.drainTimeout().toNanos(),
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      channel.close(); // the loop has stopped: the connection goes with it
    }
  }

  private static void cancelDeadline(Channel channel) {
    ScheduledFuture<?> deadline = channel.attr(DEADLINE).getAndSet(null);
    if (deadline != null) {
      deadline.cancel(false);
    }
  }

  /** Serves an in-JVM connection, on its executor. */
  void serveInJvm(InJvmTransport transport) {
    if (admitted.incrementAndGet() > maxConnections) {
      admitted.decrementAndGet();
      LOG.log(
          Level.WARNING,
          "refusing {0}: the server is at its limit of {1} connections",
          transport.remoteAddress(),
          maxConnections);
      transport.write(
          ErrorFrame.encode(
              transport.alloc(),
              0,
              0,
              ErrorCode.REJECTED_SETUP,
              "the server is at its limit of " + maxConnections + " connections"));
      transport.closeGracefully(2000);
      return;
    }
    ConnectionEngine engine =
        ConnectionEngine.resumableServer(
            transport, config, acceptor, asyncAcceptor, budget, sessions);
    if (!transport.hasListener()) {
      transport.setListener(engine); // unless a resumable session put itself in front
    }
    engine.onClose().whenComplete((reason, failure) -> admitted.decrementAndGet());
    engine.start(null, null);
    connections.add(engine);
  }

  /** RSocket from here on: a frame handler and an engine at the end of the pipeline. */
  private void serveRSocket(Channel channel, boolean messages) {
    cancelDeadline(channel);
    ConnectionEngine engine =
        FrameHandler.install(
            channel,
            config,
            messages,
            false,
            transport ->
                ConnectionEngine.resumableServer(
                    transport, config, acceptor, asyncAcceptor, budget, sessions));
    engine.start(null, null);
    connections.add(engine);
  }

  private void serveWebSocket(Channel channel, String path) {
    int maxFrameLength = config.maxFrameLength();
    WebSocketServerProtocolConfig.Builder protocol =
        WebSocketServerProtocolConfig.newBuilder()
            .websocketPath(new QueryStringDecoder(path).path())
            .checkStartsWith(true) // the path with a query; WebSocketGate checks the path itself
            .handshakeTimeoutMillis(config.setupTimeout().toMillis())
            .handleCloseFrames(false) // the frame handler runs the closing handshake
            .sendCloseFrame(null)
            .withUTF8Validator(false) // text messages are refused, not validated
            .dropPongFrames(true)
            .decoderConfig(
                WebSocketDecoderConfig.newBuilder()
                    .maxFramePayloadLength(maxFrameLength)
                    .allowExtensions(false)
                    .closeOnProtocolViolation(false) // the engine answers CONNECTION_ERROR
                    .build());
    if (!webSocket.subprotocols().isEmpty()) {
      protocol.subprotocols(String.join(",", webSocket.subprotocols()));
    }
    ChannelPipeline pipeline = channel.pipeline();
    pipeline.addLast(new HttpServerCodec(4096, 8192, 8192));
    pipeline.addLast(new HttpObjectAggregator(MAX_UPGRADE_REQUEST_BYTES));
    pipeline.addLast(new WebSocketGate(new QueryStringDecoder(path).path(), webSocket));
    pipeline.addLast(new WebSocketServerProtocolHandler(protocol.build()));
    pipeline.addLast(new WebSocketFrameAggregator(maxFrameLength));
    pipeline.addLast(new UpgradeDone());
  }

  /**
   * Starts RSocket once the upgrade's answer is out. Messages Netty decoded before that (a client
   * may send its SETUP as soon as it reads the 101, before the server's write has completed) are
   * held and handed to the frame handler after the engine has started.
   */
  private final class UpgradeDone extends ChannelInboundHandlerAdapter {
    private final List<Object> early = new ArrayList<>();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (early.size() >= 16) {
        ReferenceCountUtil.release(msg);
        ctx.close(); // a client that floods before the upgrade is done is not RSocket
        return;
      }
      early.add(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
        ctx.pipeline().remove(WebSocketGate.class);
        serveRSocket(ctx.channel(), true);
        if (!early.isEmpty()) {
          for (Object msg : early) {
            ctx.fireChannelRead(msg);
          }
          early.clear();
          ctx.fireChannelReadComplete();
        }
        ctx.pipeline().remove(this);
        ctx.channel().pipeline().get(FrameHandler.class).startWebSocket();
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      early.forEach(ReferenceCountUtil::release);
      early.clear();
    }
  }

  /**
   * Tells RSocket, a WebSocket upgrade and HTTP/2 apart by the first four bytes; under TLS, when
   * the client opens with HTTP and chose {@code h2} or {@code http/1.1} by ALPN, ALPN says which of
   * the two it speaks. ALPN never overrides bytes that are RSocket: a client that offers ALPN from
   * an HTTP-style TLS configuration (or a proxy that does) and speaks RSocket is still served as
   * RSocket.
   */
  private final class ProtocolDetector extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      if (in.readableBytes() < 4) {
        return;
      }
      // An RSocket connection opens with SETUP or RESUME on stream 0, so its bytes 3 to 6 are
      // zero; "GET " and "PRI " both have a space at byte 3.
      int first = in.getInt(in.readerIndex());
      Channel channel = ctx.channel();
      if (first != GET && first != PRI) {
        serveRSocket(channel, false);
      } else if (http2Chosen(ctx.pipeline(), first)) {
        if (http2 == null) {
          LOG.log(
              Level.DEBUG,
              "closing {0}: HTTP/2 on a port that serves no gRPC",
              channel.remoteAddress());
          in.skipBytes(in.readableBytes());
          channel.close();
          return;
        }
        cancelDeadline(channel);
        http2.takeOver(channel);
        connections.add(channel, () -> closeGracefully(channel));
      } else {
        serveWebSocket(channel, sharedWebSocketPath);
      }
      ctx.pipeline().remove(this); // hands what was read to the handlers just added
    }
  }

  /** Whether a connection that opens with HTTP speaks HTTP/2: by ALPN if chosen, else its bytes. */
  private static boolean http2Chosen(ChannelPipeline pipeline, int first) {
    SslHandler ssl = pipeline.get(SslHandler.class);
    String chosen = ssl == null ? null : ssl.applicationProtocol();
    if (ApplicationProtocolNames.HTTP_2.equals(chosen)) {
      return true;
    }
    if (ApplicationProtocolNames.HTTP_1_1.equals(chosen)) {
      return false;
    }
    return first == PRI;
  }

  /**
   * Checks a WebSocket upgrade request before Netty's handshake: the path (404), the origin (403),
   * that it is an upgrade at all (426) and, when the server names subprotocols, that the client
   * asks for one of them (400).
   */
  private static final class WebSocketGate extends ChannelInboundHandlerAdapter {
    private final String path;
    private final WebSocketOptions options;

    WebSocketGate(String path, WebSocketOptions options) {
      this.path = path;
      this.options = options;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof FullHttpRequest)) {
        ctx.fireChannelRead(msg);
        return;
      }
      FullHttpRequest request = (FullHttpRequest) msg;
      HttpResponseStatus refusal = check(request);
      if (refusal == null) {
        ctx.fireChannelRead(msg);
        return;
      }
      ReferenceCountUtil.release(msg);
      FullHttpResponse response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              refusal,
              Unpooled.copiedBuffer(refusal.reasonPhrase() + "\n", StandardCharsets.US_ASCII));
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=us-ascii");
      response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      if (refusal == HttpResponseStatus.UPGRADE_REQUIRED) {
        response.headers().set(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET);
      }
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    private HttpResponseStatus check(FullHttpRequest request) {
      if (!new QueryStringDecoder(request.uri()).path().equals(path)) {
        return HttpResponseStatus.NOT_FOUND;
      }
      if (!options.allowsOrigin(request.headers().get(HttpHeaderNames.ORIGIN))) {
        return HttpResponseStatus.FORBIDDEN;
      }
      if (!request
          .headers()
          .containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)) {
        return HttpResponseStatus.UPGRADE_REQUIRED;
      }
      if (!options.subprotocols().isEmpty()) {
        String offered = request.headers().get(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL, "");
        for (String s : offered.split(",")) {
          if (options.subprotocols().contains(s.trim())) {
            return null;
          }
        }
        return HttpResponseStatus.BAD_REQUEST;
      }
      return null;
    }
  }

  /**
   * A connection beyond the limit: on a listener where RSocket frames are the first thing said
   * (tcp, unix, local) it is answered REJECTED_SETUP, then closed; under TLS or WebSocket, where no
   * frame can be said before a handshake the server will not spend on it, it is closed at once.
   */
  private void refuse(Channel channel, TransportUri listener) {
    LOG.log(
        Level.WARNING,
        "refusing {0}: the server is at its limit of {1} connections",
        channel.remoteAddress(),
        maxConnections);
    if (listener.scheme().secure() || listener.scheme().webSocket()) {
      channel.close();
      return;
    }
    errorAndClose(
        channel,
        ErrorCode.REJECTED_SETUP,
        "the server is at its limit of " + maxConnections + " connections");
  }

  /** Writes a connection ERROR, closes the output and the connection soon after; reads nothing. */
  private static void errorAndClose(Channel channel, int code, String message) {
    ByteBuf error =
        ErrorFrame.encode(channel.alloc(), FrameHeader.LENGTH_PREFIX_SIZE, 0, code, message);
    error.setMedium(0, error.readableBytes() - FrameHeader.LENGTH_PREFIX_SIZE);
    // Half-close after the ERROR and linger briefly: closing with the client's SETUP unread would
    // reset the connection and could destroy the ERROR before the client reads it.
    channel
        .writeAndFlush(error)
        .addListener(
            written -> {
              if (!written.isSuccess()
                  || !(channel instanceof io.netty.channel.socket.DuplexChannel)) {
                channel.close();
                return;
              }
              ((io.netty.channel.socket.DuplexChannel) channel)
                  .shutdownOutput()
                  .addListener(
                      shut ->
                          channel.eventLoop().schedule(() -> channel.close(), 2, TimeUnit.SECONDS));
            });
    ChannelPipeline pipeline = channel.pipeline();
    if (pipeline.get(ProtocolDetector.class) != null) {
      pipeline.replace(ProtocolDetector.class, "discard", new DiscardInbound());
    } else {
      pipeline.addLast(new DiscardInbound());
    }
  }

  /** Drops what a refused client sends, and closes when it closes its side. */
  private static final class DiscardInbound extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
        ctx.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
