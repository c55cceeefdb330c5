package io.millrace.grpc;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import io.millrace.transport.netty.EventLoops;
import io.millrace.transport.netty.Http2Handoff;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands HTTP/2 connections that arrive on a Millrace server's ports to the endpoint's grpc-java
 * server, which listens on a private Unix domain socket: each connection is spliced to a Unix
 * socket connection to it and bytes pass through both ways. The socket lives in a directory only
 * this user can enter, deleted when the endpoint closes. grpc-java sees the caller's real address
 * ({@link Grpc#TRANSPORT_ATTR_REMOTE_ADDR}) through a transport filter: each splice binds its end
 * of the Unix socket to a path of its own (deleted once connected), which names the caller. TLS,
 * when the Millrace port has it, ends in front of the splice (so a client certificate does not
 * reach grpc-java's call attributes).
 *
 * <p>Backpressure holds both ways, as on a port of grpc-java's own: each side stops reading while
 * the other cannot take more, and the Unix socket's buffers then fill, so a caller that does not
 * read makes grpc-java's channel unwritable and its calls not ready. (Netty's in-JVM channel, used
 * before, hands writes over at once, so grpc-java could not see such a caller.)
 */
final class SharedPortHandoff implements Http2Handoff {
  private static final System.Logger LOG = System.getLogger(SharedPortHandoff.class.getName());

  private final Path directory;
  private final Path socket;
  private final EventLoopGroup loops;
  private final AtomicLong splices = new AtomicLong();
  private final ConcurrentHashMap<String, SocketAddress> callers = new ConcurrentHashMap<>();

  private SharedPortHandoff(Path directory, EventLoopGroup loops) {
    this.directory = directory;
    this.socket = directory.resolve("grpc.sock");
    this.loops = loops;
  }

  /**
   * A handoff whose grpc-java server listens in a new private directory; its connections run on
   * {@code loops} (of the preferred kind, whose Unix sockets it uses).
   */
  static SharedPortHandoff create(EventLoopGroup loops) {
    try {
      Path directory =
          Files.createTempDirectory(
              "millrace-grpc-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      return new SharedPortHandoff(directory, loops);
    } catch (IOException e) {
      throw new UncheckedIOException("no private directory for the gRPC endpoint's socket", e);
    }
  }

  /** Where the grpc-java server listens. */
  SocketAddress target() {
    return EventLoops.domainSocketAddress(socket);
  }

  /** Deletes the socket and its directory (the endpoint has closed). */
  void deleteFiles() {
    try {
      Files.deleteIfExists(socket);
      Files.deleteIfExists(directory);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not delete " + directory, e);
    }
  }

  /** Gives grpc-java the caller's address in place of the Unix socket's. */
  ServerTransportFilter callerAddresses() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attributes) {
        String path = EventLoops.domainSocketPath(attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        SocketAddress caller = path == null ? null : callers.get(path);
        return caller == null
            ? attributes
            : attributes.toBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, caller).build();
      }
    };
  }

  @Override
  public void takeOver(Channel outer) {
    outer.config().setAutoRead(false);
    Relay fromCaller = new Relay();
    outer.pipeline().addLast(fromCaller);
    Relay toCaller = new Relay();
    toCaller.attach(outer);
    Path end = directory.resolve("c" + splices.incrementAndGet() + ".sock");
    String path = end.toString();
    callers.put(path, outer.remoteAddress());
    new Bootstrap()
        .group(loops)
        .channel(EventLoops.domainClientChannel())
        .handler(toCaller)
        .connect(target(), EventLoops.domainSocketAddress(end))
        .addListener(
            (ChannelFuture connected) -> {
              deleteQuietly(end); // the address stays the connection's; the file is not needed
              if (!connected.isSuccess()) {
                callers.remove(path);
                LOG.log(
                    System.Logger.Level.WARNING,
                    "could not reach the gRPC endpoint for " + outer.remoteAddress(),
                    connected.cause());
                outer.close();
                return;
              }
              Channel inner = connected.channel();
              inner.closeFuture().addListener(f -> callers.remove(path));
              outer.eventLoop().execute(() -> fromCaller.attach(inner));
            });
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not delete " + file, e);
    }
  }

  /**
   * Passes what one channel reads to the other ({@link #attach}ed later for the caller's side,
   * which buffers what was read before), stops reading while the other cannot take more, and closes
   * the other, after what it has, when its own channel closes.
   */
  private static final class Relay extends ChannelInboundHandlerAdapter {
    private Channel peer;
    private ChannelHandlerContext ctx;
    private List<Object> pending = new ArrayList<>();
    private boolean closed;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    /** Starts passing to {@code peer}: first what came before, then reading resumes. */
    void attach(Channel peer) {
      this.peer = peer;
      if (ctx == null) {
        return; // the Unix socket side: reads start when it is registered
      }
      if (closed) {
        pending.forEach(ReferenceCountUtil::release);
        pending = null;
        peer.close();
        return;
      }
      for (Object msg : pending) {
        peer.write(msg);
      }
      pending = null;
      peer.flush();
      peer.closeFuture().addListener(f -> ctx.channel().close());
      ctx.channel().config().setAutoRead(true);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (peer != null) {
        peer.closeFuture().addListener(f -> ctx.channel().close());
      }
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (peer == null) {
        pending.add(msg);
        return;
      }
      peer.write(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (peer != null) {
        peer.flush();
        if (!peer.isWritable()) {
          ctx.channel().config().setAutoRead(false);
          peer.eventLoop()
              .execute(
                  () -> {
                    if (peer.isWritable()) {
                      ctx.channel().config().setAutoRead(true);
                    }
                  });
        }
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // This side can take more again: the other side may read.
      if (ctx.channel().isWritable() && peer != null) {
        peer.config().setAutoRead(true);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      closed = true;
      // A peer whose loop is stopping (the endpoint or the server is closing) goes with it.
      if (peer != null && peer.isOpen() && !peer.eventLoop().isShuttingDown()) {
        try {
          peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
          // What is queued for a side that does not read is not waited for long.
          Channel other = peer;
          other
              .eventLoop()
              .schedule(() -> other.close(), 10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          // the other side's loop has stopped: its channel is gone with it
        }
      }
      ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      if (pending != null) {
        pending.forEach(ReferenceCountUtil::release);
        pending.clear();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
