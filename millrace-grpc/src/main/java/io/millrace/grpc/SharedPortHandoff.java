package io.millrace.grpc;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.SecurityLevel;
import io.grpc.ServerTransportFilter;
import io.grpc.internal.GrpcAttributes;
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
import io.netty.handler.ssl.SslHandler;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSession;

/**
 * Hands HTTP/2 connections that arrive on a Millrace server's ports to the endpoint's grpc-java
 * server, which listens on a private Unix domain socket: each connection is spliced to a Unix
 * socket connection to it and bytes pass through both ways. The socket lives in a directory only
 * this user can enter, deleted when the endpoint closes. grpc-java sees the caller's real address
 * ({@link Grpc#TRANSPORT_ATTR_REMOTE_ADDR}) through a transport filter: each splice binds its end
 * of the Unix socket to a path of its own (deleted once connected), which names the caller. TLS,
 * when the Millrace port has it, ends in front of the splice; the same filter gives grpc-java the
 * caller's TLS session ({@link Grpc#TRANSPORT_ATTR_SSL_SESSION}, with a client certificate when the
 * port asks for one) and the security level, as grpc-java's own TLS port would.
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
  private final ConcurrentHashMap<String, Caller> callers = new ConcurrentHashMap<>();

  /** The Unix socket side of each splice, until it closes. */
  private final java.util.Set<Channel> inner = ConcurrentHashMap.newKeySet();

  /** The callers' sides of the splices, which may still hold grpc-java's last bytes. */
  private final java.util.Set<Channel> callerSides = ConcurrentHashMap.newKeySet();

  /** What grpc-java would know of a caller on a port of its own. */
  private record Caller(SocketAddress remote, SocketAddress local, SSLSession tls) {
    static Caller of(Channel outer) {
      SslHandler ssl = outer.pipeline().get(SslHandler.class);
      return new Caller(
          outer.remoteAddress(),
          outer.localAddress(),
          ssl == null ? null : ssl.engine().getSession());
    }

    Attributes applyTo(Attributes attributes) {
      Attributes.Builder b =
          attributes.toBuilder()
              .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote)
              .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, local);
      if (tls != null) {
        // The security level has no public key; grpc-java's own TLS port sets this one, and
        // ServerCall.getSecurityLevel() reads it (grpc-java pinned by the parent POM).
        b.set(Grpc.TRANSPORT_ATTR_SSL_SESSION, tls)
            .set(GrpcAttributes.ATTR_SECURITY_LEVEL, SecurityLevel.PRIVACY_AND_INTEGRITY);
      }
      return b.build();
    }
  }

  private volatile boolean closed;

  /** How long a splice may take to reach grpc-java before the caller is closed. */
  private static final long CONNECT_DEADLINE_SECONDS = 10;

  /**
   * The longest name a splice's end gets in the directory: {@code c}, a counter, {@code .sock}.
   * Unix socket paths are limited to 107 bytes on Linux (103 on macOS).
   */
  private static final int LONGEST_NAME = "c".length() + 20 + ".sock".length();

  private static final int MAX_SOCKET_PATH = 103;

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
    Path base = Path.of(System.getProperty("java.io.tmpdir"));
    // "millrace-grpc-" and the random part createTempDirectory adds (up to 20 digits).
    if (base.toAbsolutePath().toString().length() + 1 + 34 + 1 + LONGEST_NAME > MAX_SOCKET_PATH) {
      base = Path.of("/tmp"); // a temporary directory too deep for a Unix socket path
    }
    try {
      Path directory;
      try {
        directory =
            Files.createTempDirectory(
                base,
                "millrace-grpc-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (UnsupportedOperationException e) {
        // Not POSIX (Windows): a new temporary directory there is already the user's own.
        directory = Files.createTempDirectory(base, "millrace-grpc-");
      }
      return new SharedPortHandoff(directory, loops);
    } catch (IOException e) {
      throw new UncheckedIOException("no private directory for the gRPC endpoint's socket", e);
    }
  }

  /** Where the grpc-java server listens. */
  SocketAddress target() {
    return EventLoops.domainSocketAddress(socket);
  }

  /** New connections are closed from now on (the endpoint is closing). */
  void close() {
    closed = true;
  }

  /**
   * Waits, until {@code deadlineNanos} ({@link System#nanoTime}), for the splices to close. Once
   * grpc-java has closed its side, a splice still passes on what it read and what its Unix socket
   * holds for a caller that reads slowly: stopping the endpoint's loops before would cut that off.
   */
  void awaitSplices(long deadlineNanos) throws InterruptedException {
    // The Unix sides first: each closes once grpc-java's end and all before it were passed on. Then
    // the callers' sides, which close once they have written what they were given.
    for (java.util.Set<Channel> side : List.of(inner, callerSides)) {
      for (Channel c : side) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0 || !c.closeFuture().await(left, TimeUnit.NANOSECONDS)) {
          return;
        }
      }
    }
  }

  /** Deletes the socket directory and what is left in it (the endpoint has closed). */
  void deleteFiles() {
    closed = true;
    try (java.util.stream.Stream<Path> files = Files.list(directory)) {
      files.forEach(SharedPortHandoff::deleteQuietly);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not list " + directory, e);
    }
    deleteQuietly(directory);
  }

  /**
   * Gives grpc-java the caller's addresses in place of the Unix socket's, and its TLS session and
   * security level when the Millrace port ended TLS.
   */
  ServerTransportFilter callerAttributes() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attributes) {
        String path = EventLoops.domainSocketPath(attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        Caller caller = path == null ? null : callers.get(path);
        return caller == null ? attributes : caller.applyTo(attributes);
      }
    };
  }

  @Override
  public void takeOver(Channel outer) {
    if (closed || loops.isShuttingDown()) {
      outer.close(); // the endpoint has closed: no gRPC here any more
      return;
    }
    outer.config().setAutoRead(false);
    callerSides.add(outer);
    outer.closeFuture().addListener(f -> callerSides.remove(outer));
    Relay fromCaller = new Relay();
    outer.pipeline().addLast(new Http2Drain(), fromCaller);
    Relay toCaller = new Relay();
    toCaller.attach(outer);
    Path end = directory.resolve("c" + splices.incrementAndGet() + ".sock");
    String path = end.toString();
    callers.put(path, Caller.of(outer));
    // Should the endpoint close while this connects, its loops may never report the outcome.
    outer
        .eventLoop()
        .schedule(
            () -> {
              if (!fromCaller.attached()) {
                callers.remove(path);
                deleteQuietly(end);
                outer.close();
              }
            },
            CONNECT_DEADLINE_SECONDS,
            TimeUnit.SECONDS);
    ChannelFuture connecting;
    try {
      connecting =
          new Bootstrap()
              .group(loops)
              .channel(EventLoops.domainClientChannel())
              .handler(toCaller)
              .connect(target(), EventLoops.domainSocketAddress(end));
    } catch (RejectedExecutionException e) {
      callers.remove(path);
      outer.close();
      return;
    }
    connecting.addListener(
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
          Channel unix = connected.channel();
          inner.add(unix);
          unix.closeFuture()
              .addListener(
                  f -> {
                    callers.remove(path);
                    inner.remove(unix);
                  });
          outer.eventLoop().execute(() -> fromCaller.attach(unix));
        });
  }

  /**
   * Drains a connection taken over ({@link Http2Drain}): GOAWAY, and the connection closes once the
   * calls the caller had opened are over.
   */
  @Override
  public void closeGracefully(Channel outer) {
    Http2Drain drain = outer.pipeline().get(Http2Drain.class);
    if (drain == null) {
      outer.close();
      return;
    }
    try {
      outer.eventLoop().execute(drain::drain);
    } catch (RejectedExecutionException e) {
      outer.close(); // the server's loops have stopped: the connection is gone with them
    }
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
    private volatile Channel peer;
    private ChannelHandlerContext ctx;
    private List<Object> pending = new ArrayList<>();
    private boolean closed;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    boolean attached() {
      return peer != null;
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
      ctx.channel().config().setAutoRead(true);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      // The Unix socket side, connected: the caller may have gone meanwhile. (Later, each side's
      // channelInactive passes its end on, after what the other side still has to write.)
      if (peer != null && !peer.isOpen()) {
        ctx.close();
      }
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (peer == null) {
        pending.add(msg);
        return;
      }
      if (!peer.isActive()) {
        // The other side has closed: what this side still reads is dropped, and it goes on
        // reading, so that its socket is not closed with unread bytes (a reset would discard
        // what it still sends to its own peer).
        ReferenceCountUtil.release(msg);
        return;
      }
      peer.write(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      Channel p = peer;
      if (p == null || !p.isActive()) {
        return;
      }
      p.flush();
      if (!p.isWritable()) {
        ctx.channel().config().setAutoRead(false);
        try {
          p.eventLoop()
              .execute(
                  () -> {
                    if (p.isWritable() || !p.isActive()) {
                      ctx.channel().config().setAutoRead(true);
                    }
                  });
        } catch (RejectedExecutionException e) {
          // The other side's loop has stopped (the endpoint closed): its channel is gone, and
          // this side reads on to drop what comes.
          ctx.channel().config().setAutoRead(true);
        }
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // This side can take more again: the other side may read, unless it has closed (its loop
      // may have stopped, and asking it to read would fail this side).
      Channel p = peer;
      if (ctx.channel().isWritable() && p != null && p.isOpen()) {
        try {
          p.config().setAutoRead(true);
        } catch (RejectedExecutionException e) {
          // its loop stopped as it closed
        }
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
          other.eventLoop().schedule(() -> other.close(), 10, TimeUnit.SECONDS);
        } catch (RejectedExecutionException e) {
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
      LOG.log(System.Logger.Level.DEBUG, "gRPC splice closed by a failure", cause);
      if (cause instanceof IOException) {
        ctx.close(); // the socket failed: nothing more goes through it
      } else {
        // What is queued for this side's peer still goes out first.
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      }
    }
  }
}
