package io.millrace.transport.netty;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringDomainSocketChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerDomainSocketChannel;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.util.Locale;

/**
 * The kind of socket I/O under TCP and Unix domain socket connections: Linux's epoll or io_uring
 * through Netty's native transports, or the JDK's NIO everywhere else.
 *
 * <p>{@link #preferred()} is what servers and clients use unless told otherwise: the system
 * property {@code millrace.io} ({@code epoll}, {@code io_uring} or {@code nio}) when set, else
 * epoll where it is available, else NIO. io_uring is there to be chosen, not the default: on the
 * kernels measured it was not faster than epoll for RSocket's small frames (docs/benchmarks.md,
 * "Transports"), and some container runtimes forbid its system calls.
 */
public enum IoKind {
  EPOLL,
  IO_URING,
  NIO;

  private static final System.Logger LOG = System.getLogger(IoKind.class.getName());
  private static volatile IoKind preferred;

  /** Whether this kind works on this machine (its native library loads, the kernel allows it). */
  public boolean isAvailable() {
    switch (this) {
      case EPOLL:
        return Epoll.isAvailable();
      case IO_URING:
        return IoUring.isAvailable();
      default:
        return true;
    }
  }

  /** Why this kind is unavailable here, or null when it is available. */
  public Throwable unavailabilityCause() {
    switch (this) {
      case EPOLL:
        return Epoll.unavailabilityCause();
      case IO_URING:
        return IoUring.unavailabilityCause();
      default:
        return null;
    }
  }

  /** Fails with the reason when this kind cannot be used here. */
  public IoKind requireAvailable() {
    if (!isAvailable()) {
      throw new IllegalStateException(
          "the " + this + " transport is not available here", unavailabilityCause());
    }
    return this;
  }

  /** The kind servers and clients use by default; chosen, and logged, on first use. */
  public static IoKind preferred() {
    IoKind kind = preferred;
    if (kind == null) {
      synchronized (IoKind.class) {
        kind = preferred;
        if (kind == null) {
          // millrace.transport is the name of the earlier switch (nio only).
          kind =
              choose(System.getProperty("millrace.io", System.getProperty("millrace.transport")));
          preferred = kind;
        }
      }
    }
    return kind;
  }

  /** The preferred kind if it has been chosen (and logged), else null. */
  static IoKind chosenPreferred() {
    return preferred;
  }

  private static IoKind choose(String property) {
    if (property != null && !property.isBlank()) {
      IoKind asked = parse(property);
      if (asked.isAvailable()) {
        LOG.log(System.Logger.Level.INFO, "socket I/O: {0} (millrace.io={1})", asked, property);
        return asked;
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "socket I/O: millrace.io={0} is not available here ({1}); using {2}",
          property,
          asked.unavailabilityCause(),
          EPOLL.isAvailable() ? EPOLL : NIO);
    }
    IoKind kind = EPOLL.isAvailable() ? EPOLL : NIO;
    LOG.log(System.Logger.Level.INFO, "socket I/O: {0}", kind);
    return kind;
  }

  /** {@code epoll}, {@code io_uring} (or {@code iouring}) or {@code nio}, in any case. */
  public static IoKind parse(String name) {
    switch (name.trim().toLowerCase(Locale.ROOT).replace("-", "_")) {
      case "epoll":
        return EPOLL;
      case "io_uring":
      case "iouring":
        return IO_URING;
      case "nio":
        return NIO;
      default:
        throw new IllegalArgumentException(
            "unknown I/O kind '" + name + "' (expected epoll, io_uring or nio)");
    }
  }

  IoHandlerFactory handlerFactory() {
    switch (this) {
      case EPOLL:
        return EpollIoHandler.newFactory();
      case IO_URING:
        return IoUringIoHandler.newFactory();
      default:
        return NioIoHandler.newFactory();
    }
  }

  /**
   * The kind of {@code group}'s event loops (Netty 4.2 I/O loops of a kind available here), or the
   * preferred kind when it cannot tell.
   */
  public static IoKind of(io.netty.channel.EventLoopGroup group) {
    if (group instanceof io.netty.channel.IoEventLoopGroup io) {
      for (IoKind kind : values()) {
        if (kind.isAvailable() && io.isIoType(kind.handlerType())) {
          return kind;
        }
      }
    }
    return preferred();
  }

  private Class<? extends io.netty.channel.IoHandler> handlerType() {
    switch (this) {
      case EPOLL:
        return EpollIoHandler.class;
      case IO_URING:
        return IoUringIoHandler.class;
      default:
        return NioIoHandler.class;
    }
  }

  Class<? extends ServerChannel> serverChannel(boolean domainSocket) {
    switch (this) {
      case EPOLL:
        return domainSocket ? EpollServerDomainSocketChannel.class : EpollServerSocketChannel.class;
      case IO_URING:
        return domainSocket
            ? IoUringServerDomainSocketChannel.class
            : IoUringServerSocketChannel.class;
      default:
        return domainSocket ? NioServerDomainSocketChannel.class : NioServerSocketChannel.class;
    }
  }

  Class<? extends DuplexChannel> clientChannel(boolean domainSocket) {
    switch (this) {
      case EPOLL:
        return domainSocket ? EpollDomainSocketChannel.class : EpollSocketChannel.class;
      case IO_URING:
        return domainSocket ? IoUringDomainSocketChannel.class : IoUringSocketChannel.class;
      default:
        return domainSocket ? NioDomainSocketChannel.class : NioSocketChannel.class;
    }
  }

  /**
   * The address of the Unix domain socket at {@code path}: the JDK's for NIO, Netty's otherwise.
   */
  SocketAddress domainSocketAddress(String path) {
    return this == NIO ? UnixDomainSocketAddress.of(path) : new DomainSocketAddress(path);
  }

  /**
   * Whether a connection of this kind can be half-closed (ALLOW_HALF_CLOSURE): all but Netty's NIO
   * Unix sockets, which close when the peer ends its output (and warn of the unknown option).
   */
  boolean halfClosure(boolean domainSocket) {
    return this != NIO || !domainSocket;
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
