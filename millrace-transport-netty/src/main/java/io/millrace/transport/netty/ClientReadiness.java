package io.millrace.transport.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler.ClientHandshakeStateEvent;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.io.IOException;
import javax.net.ssl.SSLException;

/**
 * Completes {@link #ready()} when a client connection may send SETUP: at once over plain sockets,
 * after the TLS handshake, after the WebSocket upgrade; fails it with the reason when a handshake
 * fails or the connection closes first.
 */
final class ClientReadiness extends ChannelInboundHandlerAdapter {
  private final ChannelPromise ready;
  private final TransportUri.Scheme scheme;

  ClientReadiness(ChannelPromise ready, TransportUri.Scheme scheme) {
    this.ready = ready;
    this.scheme = scheme;
  }

  ChannelPromise ready() {
    return ready;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (!scheme.secure() && !scheme.webSocket()) {
      ready.trySuccess();
    }
    ctx.fireChannelActive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof SslHandshakeCompletionEvent) {
      SslHandshakeCompletionEvent tls = (SslHandshakeCompletionEvent) evt;
      if (!tls.isSuccess()) {
        ready.tryFailure(
            tls.cause() instanceof SSLException
                ? tls.cause()
                : new SSLException("TLS handshake failed: " + tls.cause(), tls.cause()));
      } else if (!scheme.webSocket()) {
        ready.trySuccess();
      }
    } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
      ready.trySuccess();
    } else if (evt == ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
      ready.tryFailure(new IOException("the WebSocket upgrade timed out"));
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ready.tryFailure(cause);
    ctx.fireExceptionCaught(cause);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    ready.tryFailure(new IOException("the connection closed during its handshake"));
    ctx.fireChannelInactive();
  }
}
