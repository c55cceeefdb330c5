package io.millrace.grpc;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import io.millrace.transport.netty.Http2Handoff;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hands HTTP/2 connections that arrive on a Millrace server's ports to the endpoint's grpc-java
 * server, which listens on an in-JVM address: each connection is spliced to an in-JVM channel to it
 * and bytes pass through both ways. grpc-java sees the caller's real address ({@link
 * Grpc#TRANSPORT_ATTR_REMOTE_ADDR}) through a transport filter. TLS, when the Millrace port has it,
 * ends in front of the splice (so a client certificate does not reach grpc-java's call attributes).
 *
 * <p>Backpressure: a caller that sends faster than grpc-java reads is held back (the caller's
 * channel stops reading while the in-JVM one is not writable). The other way, Netty's in-JVM
 * channel hands grpc-java's writes over at once, so grpc-java cannot see a caller that does not
 * read; what waits for such a caller is bounded instead: above {@value #MAX_QUEUED_TO_CALLER} bytes
 * queued for it, the connection is closed. HTTP/2 flow control keeps honest callers far below that.
 */
final class SharedPortHandoff implements Http2Handoff {
  /** Bytes queued for a caller that does not read, above which its connection is closed. */
  static final long MAX_QUEUED_TO_CALLER = 32L << 20;

  private static final System.Logger LOG = System.getLogger(SharedPortHandoff.class.getName());

  private final LocalAddress target;
  private final EventLoopGroup localLoops;
  private final ConcurrentHashMap<SocketAddress, SocketAddress> callers = new ConcurrentHashMap<>();

  SharedPortHandoff(LocalAddress target, EventLoopGroup localLoops) {
    this.target = target;
    this.localLoops = localLoops;
  }

  /** Gives grpc-java the caller's address in place of the in-JVM one. */
  ServerTransportFilter callerAddresses() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attributes) {
        SocketAddress caller = callers.get(attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        return caller == null
            ? attributes
            : attributes.toBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, caller).build();
      }
    };
  }

  @Override
  public void takeOver(Channel outer) {
    outer.config().setAutoRead(false);
    Relay fromCaller = new Relay(false);
    outer.pipeline().addLast(fromCaller);
    Relay toCaller = new Relay(true);
    toCaller.attach(outer);
    new Bootstrap()
        .group(localLoops)
        .channel(LocalChannel.class)
        .handler(toCaller)
        .connect(target)
        .addListener(
            (ChannelFuture connected) -> {
              if (!connected.isSuccess()) {
                outer.close();
                return;
              }
              Channel inner = connected.channel();
              SocketAddress local = inner.localAddress();
              callers.put(local, outer.remoteAddress());
              inner.closeFuture().addListener(f -> callers.remove(local));
              outer.eventLoop().execute(() -> fromCaller.attach(inner));
            });
  }

  /**
   * Passes what one channel reads to the other ({@link #attach}ed later for the caller's side,
   * which buffers what was read before), stops reading while the other cannot take more, and closes
   * the other, after what it has, when its own channel closes.
   */
  private static final class Relay extends ChannelInboundHandlerAdapter {
    /** Whether this relay writes to the caller (whose queue is bounded). */
    private final boolean toCaller;

    private Channel peer;
    private ChannelHandlerContext ctx;
    private List<Object> pending = new ArrayList<>();
    private boolean closed;

    Relay(boolean toCaller) {
      this.toCaller = toCaller;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    /** Starts passing to {@code peer}: first what came before, then reading resumes. */
    void attach(Channel peer) {
      this.peer = peer;
      if (ctx == null) {
        return; // the in-JVM side: reads start when it is registered
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
      if (toCaller && !peer.isWritable() && queued(peer) > MAX_QUEUED_TO_CALLER) {
        LOG.log(
            System.Logger.Level.WARNING,
            "closing the gRPC connection from {0}: more than {1} bytes queued for a caller that"
                + " does not read",
            peer.remoteAddress(),
            MAX_QUEUED_TO_CALLER);
        peer.close();
        ctx.close();
      }
    }

    private static long queued(Channel channel) {
      io.netty.channel.ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
      return buffer == null ? 0 : buffer.totalPendingWriteBytes();
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
      if (peer != null && peer.isOpen()) {
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
