package io.millrace.transport.netty;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Picks Netty's native epoll transport where the platform has it and NIO otherwise, and makes
 * event-loop groups for it. Set {@code -Dmillrace.transport=nio} to force NIO.
 */
public final class EventLoops {
  private static final boolean EPOLL =
      !"nio".equalsIgnoreCase(System.getProperty("millrace.transport")) && Epoll.isAvailable();

  private EventLoops() {}

  /** Whether the native epoll transport is in use. */
  public static boolean epoll() {
    return EPOLL;
  }

  /** A new group of {@code threads} event loops (0: Netty's default, twice the cores). */
  public static EventLoopGroup newGroup(int threads, String name) {
    IoHandlerFactory handler = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), handler);
  }

  /** The server channel class of the transport in use. */
  public static Class<? extends ServerChannel> serverChannel() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  /** The client channel class of the transport in use. */
  public static Class<? extends SocketChannel> clientChannel() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }
}
