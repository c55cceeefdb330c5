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
 * server, which listens on an in-JVM address: each connection is spliced to an in-JVM channel to
 * it, bytes passed through both ways with backpressure (a side that cannot write stops the other
 * from reading). grpc-java sees the caller's real address ({@link Grpc#TRANSPORT_ATTR_REMOTE_ADDR})
 * through a transport filter. TLS, when the Millrace port has it, ends in front of the splice.
 */
final class SharedPortHandoff implements Http2Handoff {
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
    Relay fromCaller = new Relay();
    outer.pipeline().addLast(fromCaller);
    Relay toCaller = new Relay();
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
