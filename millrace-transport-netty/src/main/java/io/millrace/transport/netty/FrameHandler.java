package io.millrace.transport.netty;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionEngine;
import io.millrace.core.Transport;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.lang.System.Logger.Level;
import java.util.function.Function;

/**
 * Splits the inbound byte stream into length-prefixed frames and hands each to the connection
 * engine; forwards read-complete, writability and close events to it.
 *
 * <p>Not a {@link ByteToMessageDecoder}: frames go straight to the engine instead of through the
 * pipeline, and that class asks the channel for more data when a read produced no message even with
 * auto-read off, which would defeat the engine's read pausing. The cumulation logic is Netty's own
 * {@link ByteToMessageDecoder#MERGE_CUMULATOR}.
 *
 * <p>A length above the configured maximum frame length is reported to the engine, which closes the
 * connection with CONNECTION_ERROR; nothing of such a frame is buffered.
 */
final class FrameHandler extends ChannelInboundHandlerAdapter {
  private static final System.Logger LOG = System.getLogger(FrameHandler.class.getName());
  private static final int DISCARD_AFTER_BYTES = 64 * 1024;

  private final int maxFrameLength;
  private ConnectionEngine engine;
  private ByteBuf cumulation;
  private boolean failed;

  FrameHandler(int maxFrameLength) {
    this.maxFrameLength = maxFrameLength;
  }

  /**
   * Puts a frame handler on {@code channel} and creates its engine with {@code factory}; the caller
   * starts the engine.
   */
  static ConnectionEngine install(
      Channel channel, ConnectionConfig config, Function<Transport, ConnectionEngine> factory) {
    FrameHandler handler = new FrameHandler(config.maxFrameLength());
    handler.engine = factory.apply(new ChannelTransport(channel));
    channel.pipeline().addLast(handler);
    return handler.engine;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf in = (ByteBuf) msg;
    if (failed) {
      in.release();
      return;
    }
    cumulation =
        cumulation == null
            ? in
            : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
    ByteBuf buf = cumulation;
    while (buf.readableBytes() >= FrameHeader.LENGTH_PREFIX_SIZE) {
      int length = buf.getUnsignedMedium(buf.readerIndex());
      if (length > maxFrameLength) {
        failed = true;
        releaseCumulation();
        engine.onFrameTooLong(length);
        return;
      }
      if (buf.readableBytes() < FrameHeader.LENGTH_PREFIX_SIZE + length) {
        break;
      }
      buf.skipBytes(FrameHeader.LENGTH_PREFIX_SIZE);
      ByteBuf frame = buf.readRetainedSlice(length);
      try {
        engine.onFrame(frame);
      } finally {
        frame.release();
      }
      if (cumulation == null) {
        return; // the channel closed while handling the frame
      }
    }
    if (!buf.isReadable()) {
      releaseCumulation();
    } else if (buf.readerIndex() >= DISCARD_AFTER_BYTES && buf.refCnt() == 1) {
      // Only while no frame slice is alive: a slice kept for reassembly or by the application
      // shares this memory, and discarding moves the bytes under it.
      buf.discardSomeReadBytes();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    engine.onReadComplete();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    engine.onWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    releaseCumulation();
    engine.onTransportClosed(null);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseCumulation();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.log(Level.DEBUG, "closing " + ctx.channel() + " after an I/O error", cause);
    ctx.close();
  }

  private void releaseCumulation() {
    if (cumulation != null) {
      cumulation.release();
      cumulation = null;
    }
  }
}
