package io.millrace.transport.netty;

import io.netty.channel.Channel;

/**
 * Takes over connections that open with HTTP/2 on a port shared with RSocket (the gRPC endpoint of
 * millrace-grpc registers one): {@link #takeOver} adds the handlers that serve it to the channel's
 * pipeline, and the bytes read so far, the HTTP/2 connection preface first, then flow into them.
 * Called on the channel's event loop.
 */
@FunctionalInterface
public interface Http2Handoff {
  void takeOver(Channel channel);

  /**
   * Asks a connection taken over to end once the calls on it are done (the server is shutting
   * down): no new calls, then the connection closes. Any thread; the default closes it at once.
   */
  default void closeGracefully(Channel channel) {
    channel.close();
  }
}
