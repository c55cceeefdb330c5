package io.millrace.transport.netty;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;

/**
 * Event-loop groups and channel classes for the {@linkplain IoKind#preferred() preferred} kind of
 * socket I/O, for code that builds its own Netty bootstraps next to Millrace's (the gRPC endpoint,
 * benchmarks).
 */
public final class EventLoops {
  private EventLoops() {}

  /** Whether the native epoll transport is the preferred kind. */
  public static boolean epoll() {
    return IoKind.preferred() == IoKind.EPOLL;
  }

  /** A new group of {@code threads} event loops (0: Netty's default, twice the cores). */
  public static EventLoopGroup newGroup(int threads, String name) {
    return newGroup(IoKind.preferred(), threads, name);
  }

  /** A new group of {@code threads} event loops of {@code kind}. */
  public static EventLoopGroup newGroup(IoKind kind, int threads, String name) {
    return new MultiThreadIoEventLoopGroup(
        threads, new DefaultThreadFactory(name, true), kind.handlerFactory());
  }

  /** The TCP server channel class of the preferred kind. */
  public static Class<? extends ServerChannel> serverChannel() {
    return IoKind.preferred().serverChannel(false);
  }

  /** The TCP server channel class that runs on {@code group}'s loops (see {@link IoKind#of}). */
  public static Class<? extends ServerChannel> serverChannel(EventLoopGroup group) {
    return IoKind.of(group).serverChannel(false);
  }

  /** The TCP client channel class of the preferred kind. */
  public static Class<? extends DuplexChannel> clientChannel() {
    return IoKind.preferred().clientChannel(false);
  }

  /** The Unix domain socket server channel class of the preferred kind. */
  public static Class<? extends ServerChannel> domainServerChannel() {
    return IoKind.preferred().serverChannel(true);
  }

  /** The Unix domain socket client channel class of the preferred kind. */
  public static Class<? extends DuplexChannel> domainClientChannel() {
    return IoKind.preferred().clientChannel(true);
  }

  /** The address of the Unix domain socket at {@code path}, as the preferred kind takes it. */
  public static SocketAddress domainSocketAddress(Path path) {
    return IoKind.preferred().domainSocketAddress(path.toString());
  }

  /**
   * The path of a Unix domain socket address of either form (Netty's or the JDK's), else null: an
   * unbound peer has an empty path.
   */
  public static String domainSocketPath(SocketAddress address) {
    if (address instanceof DomainSocketAddress netty) {
      return netty.path();
    }
    if (address instanceof UnixDomainSocketAddress jdk) {
      return jdk.getPath().toString();
    }
    return null;
  }
}
