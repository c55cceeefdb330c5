package io.millrace.transport.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.ssl.SslHandler;
import java.net.URI;

/** The handlers a client connection needs under RSocket: TLS and the WebSocket upgrade. */
final class ClientPipelines {
  private ClientPipelines() {}

  /**
   * Puts TLS ({@code tls}, for secure schemes) and the WebSocket upgrade, where {@code uri} asks
   * for them, at the end of the pipeline, then a {@link ClientReadiness}; returns the promise that
   * completes when frames may go out.
   */
  static ChannelPromise addHandshakes(
      Channel channel,
      TransportUri uri,
      ClientTls tls,
      WebSocketOptions webSocket,
      int maxFrameLength,
      int timeoutMillis) {
    ChannelPipeline pipeline = channel.pipeline();
    TransportUri.Scheme scheme = uri.scheme();
    if (scheme.secure()) {
      SslHandler ssl = tls.newHandler(channel.alloc(), uri.host(), uri.port(), scheme.webSocket());
      ssl.setHandshakeTimeoutMillis(timeoutMillis);
      pipeline.addLast(ssl);
    }
    if (scheme.webSocket()) {
      DefaultHttpHeaders headers = new DefaultHttpHeaders();
      webSocket.headers().forEach(headers::add);
      URI target =
          URI.create((scheme.secure() ? "wss://" : "ws://") + hostAndPort(uri) + uri.path());
      WebSocketClientProtocolConfig.Builder protocol =
          WebSocketClientProtocolConfig.newBuilder()
              .webSocketUri(target)
              .customHeaders(headers)
              .maxFramePayloadLength(maxFrameLength)
              .allowExtensions(false)
              .handleCloseFrames(false) // the frame handler runs the closing handshake
              .sendCloseFrame(null)
              .dropPongFrames(true)
              .withUTF8Validator(false)
              .generateOriginHeader(false) // not a browser
              .handshakeTimeoutMillis(timeoutMillis);
      if (!webSocket.subprotocols().isEmpty()) {
        protocol.subprotocol(String.join(",", webSocket.subprotocols()));
      }
      pipeline.addLast(new HttpClientCodec());
      pipeline.addLast(new HttpObjectAggregator(16 * 1024));
      pipeline.addLast(new WebSocketClientProtocolHandler(protocol.build()));
      pipeline.addLast(new WebSocketFrameAggregator(maxFrameLength));
    }
    ClientReadiness readiness = new ClientReadiness(channel.newPromise(), scheme);
    pipeline.addLast(readiness);
    return readiness.ready();
  }

  private static String hostAndPort(TransportUri uri) {
    String host = uri.host().indexOf(':') >= 0 ? "[" + uri.host() + "]" : uri.host();
    return host + ":" + uri.port();
  }
}
