package io.millrace.transport.netty;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.core.internal.LentFrame;
import io.millrace.core.internal.Transport;
import io.millrace.core.internal.TransportListener;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Function;

/**
 * Splits the inbound byte stream into length-prefixed frames, or takes each binary WebSocket
 * message as one frame, and hands each to the connection engine; forwards read-complete,
 * writability, half-close, error and close events to it.
 *
 * <p>Not a {@link ByteToMessageDecoder}: frames go straight to the engine instead of through the
 * pipeline, and that class asks the channel for more data when a read produced no message even with
 * auto-read off, which would defeat the engine's read pausing. The cumulation logic is Netty's own
 * {@link ByteToMessageDecoder#MERGE_CUMULATOR}.
 *
 * <p>Frames are lent, not cut out: the handler sets the cumulation's reader and writer index around
 * a frame, hands the engine the cumulation's one {@link LentFrame} view, and puts the indices back
 * when the engine returns, so a frame costs no object and no reference-count update. What the
 * engine and the application keep of it they keep with {@code retainedSlice()}; the view refuses
 * {@code retain()}.
 *
 * <p>When the engine stops reading ({@link Transport#setReading}) the handler stops handing over
 * frames at once, in the middle of a batch if need be, and turns auto-read off; what was already
 * read stays in the cumulation (one read's worth at most) and is handed over first when reading
 * resumes, from a task of its own. Once the connection is closing the handler drops what arrives.
 *
 * <p>A length above the configured maximum frame length is reported to the engine, which closes the
 * connection with CONNECTION_ERROR; nothing of such a frame is buffered.
 *
 * <p>Over WebSocket ({@link #messages}) Netty does the upgrade; then {@link #startWebSocket} takes
 * Netty's WebSocket codec out of the pipeline and this handler reads RFC 6455 frames from the bytes
 * itself ({@link WebSocketFraming}): each binary message is one RSocket frame, lent from the read
 * buffer as over TCP; continuation frames are gathered up to the maximum frame length (a longer
 * message, or a longer header, becomes the same CONNECTION_ERROR, nothing of it buffered); pings
 * are answered; a Close from the peer is its end of stream ({@link
 * TransportListener#onInputClosed}), or the end of the closing handshake when this side closed
 * first; text and malformed frames close the connection with the WebSocket status for them. Frames
 * Netty's codec decoded before it left are taken as messages.
 */
final class FrameHandler extends ChannelInboundHandlerAdapter {
  private static final int DISCARD_AFTER_BYTES = 64 * 1024;

  private final int maxFrameLength;
  private final boolean messages;

  /** Over WebSocket: whether this is the client (its frames masked, the server's not). */
  private final boolean client;

  /** Over WebSocket: whether bytes are read as frames here (Netty's codec has left). */
  private boolean rawWebSocket;

  /** A message arriving in continuation frames, gathered so far. */
  private ByteBuf fragments;

  private ChannelTransport transport;
  private TransportListener listener;

  /**
   * The listener when it is the engine itself (no resumption), else null: the per-frame call then
   * goes straight to the final class instead of through the interface. Plain throughput fell 9-11 %
   * when the interface came in and was back within noise with this; see "Plain Millrace before and
   * after the resumption work" in docs/benchmarks.md.
   */
  private ConnectionEngine engine;

  private ChannelHandlerContext ctx;
  private ByteBuf cumulation;

  /** The view through which frames of the cumulation are lent to the engine ({@link #lentView}). */
  private LentFrame lentView;

  /**
   * Whether {@link #deliverFrames} is lending frames: a read or a resumed delivery from inside a
   * callback must wait for the batch to end.
   */
  private boolean delivering;

  /** Reads that arrived from inside a callback ({@link #delivering}), merged when it ends. */
  private ArrayDeque<ByteBuf> arrivedWhileDelivering;

  private ArrayDeque<ByteBuf> pendingMessages;
  private boolean peerClosed;
  private boolean failed;
  private boolean inactive;
  private boolean suspended;
  private boolean discarding;
  private final Runnable resumeTask = this::resume;

  FrameHandler(int maxFrameLength, boolean messages, boolean client) {
    this.maxFrameLength = maxFrameLength;
    this.messages = messages;
    this.client = client;
  }

  /**
   * Puts a frame handler on {@code channel} and creates its engine with {@code factory}; the caller
   * starts the engine.
   */
  static ConnectionEngine install(
      Channel channel,
      ConnectionConfig config,
      boolean messages,
      boolean client,
      Function<Transport, ConnectionEngine> factory) {
    FrameHandler handler = attach(channel, config, messages, client);
    ConnectionEngine engine = factory.apply(handler.transport);
    if (handler.listener == NOBODY) {
      handler.setListener(engine); // unless a resumable session put itself in front of the engine
    }
    return engine;
  }

  /**
   * Puts a frame handler on {@code channel} with no listener yet: the transport for a connection
   * that a resumable session takes over ({@link Transport#setListener} before anything is read).
   */
  static Transport installForResumption(
      Channel channel, ConnectionConfig config, boolean messages) {
    return attach(channel, config, messages, true).transport;
  }

  private static FrameHandler attach(
      Channel channel, ConnectionConfig config, boolean messages, boolean client) {
    FrameHandler handler = new FrameHandler(config.maxFrameLength(), messages, client);
    handler.transport = new ChannelTransport(channel, handler, messages, client);
    handler.listener = NOBODY;
    channel.pipeline().addLast(handler);
    return handler;
  }

  /** Hears nothing: the listener of a connection not yet taken over. */
  static final TransportListener NOBODY =
      new TransportListener() {
        @Override
        public void onFrame(ByteBuf frame) {}

        @Override
        public void onReadComplete() {}

        @Override
        public void onWritabilityChanged() {}

        @Override
        public void onFrameTooLong(long length) {}

        @Override
        public void onInputClosed() {}

        @Override
        public void onTransportError(Throwable cause) {}

        @Override
        public void onTransportClosed() {}
      };

  /** The transport's {@link Transport#setListener}. */
  void setListener(TransportListener listener) {
    this.listener = listener;
    this.engine = listener instanceof ConnectionEngine ? (ConnectionEngine) listener : null;
    if (inactive) {
      // Closed before the new listener came (a resumed connection moving to its session): it
      // hears of it too, from a task of its own.
      ctx.executor().execute(listener::onTransportClosed);
    }
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  boolean isWebSocket() {
    return messages;
  }

  /**
   * Over WebSocket, once the upgrade is done: Netty's WebSocket handlers leave the pipeline (what
   * its decoder had read but not decoded comes here as bytes) and frames are read here.
   */
  void startWebSocket() {
    ChannelPipeline pipeline = ctx.pipeline();
    for (Class<? extends ChannelHandler> type :
        List.of(
            WebSocketFrameAggregator.class,
            WebSocketServerProtocolHandler.class,
            WebSocketClientProtocolHandler.class,
            WebSocketFrameEncoder.class)) {
      ChannelHandlerContext handler = pipeline.context(type);
      if (handler != null) {
        pipeline.remove(handler.handler());
      }
    }
    rawWebSocket = true;
    ChannelHandlerContext decoder = pipeline.context(WebSocketFrameDecoder.class);
    if (decoder != null) {
      pipeline.remove(decoder.handler());
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (messages && !(msg instanceof ByteBuf && rawWebSocket)) {
      readMessage(ctx, msg);
      return;
    }
    ByteBuf in = (ByteBuf) msg;
    if (failed || discarding && !messages) {
      // Closing over WebSocket, frames are still read: the peer's Close ends the handshake.
      in.release();
      return;
    }
    if (delivering) {
      // A read from inside a frame's callback (no handler of ours does that): the cumulation's
      // indices are set around the frame being read, so the bytes wait until the batch ends.
      if (arrivedWhileDelivering == null) {
        arrivedWhileDelivering = new ArrayDeque<>(2);
      }
      arrivedWhileDelivering.add(in);
      return;
    }
    cumulation =
        cumulation == null
            ? in
            : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
    if (!suspended) {
      deliverFrames();
    }
  }

  /** Hands the whole frames in the cumulation to the engine until it suspends reading. */
  private void deliverFrames() {
    if (delivering) {
      return; // resumed from inside a frame's callback: the loop below goes on by itself
    }
    ByteBuf buf = cumulation;
    // A callback that closes the channel releases the cumulation; the frame it is reading, lent
    // out of that buffer, stays valid until the callback returns.
    buf.retain();
    delivering = true;
    try {
      if (messages) {
        lendWebSocketFrames(buf);
      } else {
        lendFrames(buf);
      }
    } finally {
      delivering = false;
      releaseBatchReference(buf);
    }
    if (cumulation != buf) {
      releaseArrivedWhileDelivering();
      return; // failed, or the channel closed while handling a frame
    }
    if (arrivedWhileDelivering != null && !arrivedWhileDelivering.isEmpty()) {
      for (ByteBuf in; (in = arrivedWhileDelivering.poll()) != null; ) {
        cumulation = ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
      }
      if (!suspended) {
        deliverFrames();
      }
      return;
    }
    if (!buf.isReadable()) {
      buf.release();
      cumulation = null;
      lentView = null;
    } else if (buf.readerIndex() >= DISCARD_AFTER_BYTES && buf.refCnt() == 1) {
      // Only while no slice of it is kept by the application: a kept slice shares this memory,
      // and discarding moves the bytes under it.
      buf.discardSomeReadBytes();
    }
  }

  /**
   * Gives back the read batch's reference to {@code buf}. A reader that released what it was only
   * lent (a slice or duplicate of a received buffer shares its count) has taken the handler's own
   * reference: the buffer is let go without another release and the connection fails, rather than
   * read on from memory that may already be someone else's.
   */
  private void releaseBatchReference(ByteBuf buf) {
    boolean ours = cumulation == buf;
    int count = buf.refCnt();
    if (count > (ours ? 1 : 0)) {
      buf.release();
      return;
    }
    if (count > 0) {
      buf.release();
    }
    if (ours) {
      cumulation = null;
      lentView = null;
      failed = true;
      releaseMessages();
      listener.onTransportError(
          new IllegalStateException(
              "a received buffer was released by the code it was lent to: keep received buffers"
                  + " with retainedSlice() and release only that"));
      ctx.close();
    }
  }

  /** Drops reads that came in from inside a callback once the connection has failed or closed. */
  private void releaseArrivedWhileDelivering() {
    ArrayDeque<ByteBuf> arrived = arrivedWhileDelivering;
    if (arrived != null) {
      for (ByteBuf in; (in = arrived.poll()) != null; ) {
        in.release();
      }
    }
  }

  /** Length-prefixed frames from the cumulation {@code buf}. */
  private void lendFrames(ByteBuf buf) {
    // The view gives the buffer's address for this batch only (LentFrame.takeAddress).
    LentFrame view = lentView(buf);
    view.takeAddress();
    try {
      while (!suspended && buf.readableBytes() >= FrameHeader.LENGTH_PREFIX_SIZE) {
        int length = buf.getUnsignedMedium(buf.readerIndex());
        if (length > maxFrameLength) {
          failed = true;
          releaseCumulation();
          listener.onFrameTooLong(length);
          return;
        }
        if (buf.readableBytes() < FrameHeader.LENGTH_PREFIX_SIZE + length) {
          return;
        }
        int start = buf.readerIndex() + FrameHeader.LENGTH_PREFIX_SIZE;
        if (!lend(buf, start, start + length)) {
          return;
        }
      }
    } finally {
      view.dropAddress();
    }
  }

  /**
   * Lends the frame at {@code start..end} of the cumulation {@code buf} to the engine through the
   * buffer's view ({@link LentFrame}) and moves the reader index past it, whatever the callback did
   * with the view's indices. False when the connection stopped reading meanwhile (it closed or
   * failed), or the callback wrote past the frame, into the bytes of the next: that fails the
   * connection, as a slice would have refused the write.
   */
  private boolean lend(ByteBuf buf, int start, int end) {
    int writerIndex = buf.writerIndex();
    LentFrame frame = lentView(buf);
    buf.setIndex(start, end);
    boolean wrotePast = false;
    try {
      handOver(frame);
    } finally {
      if (cumulation == buf) {
        wrotePast = buf.writerIndex() > end || frame.metadataWrittenPast();
        buf.setIndex(end, writerIndex);
      }
    }
    if (cumulation != buf) {
      return false;
    }
    if (wrotePast) {
      failed = true;
      releaseCumulation();
      listener.onTransportError(
          new IllegalStateException("a received frame was written past its end by its reader"));
      ctx.close();
      return false;
    }
    return true;
  }

  /** The view of {@code buf} that frames are lent through, made once per receive buffer. */
  private LentFrame lentView(ByteBuf buf) {
    LentFrame view = lentView;
    if (view == null || !view.views(buf)) {
      view = lentView = new LentFrame(buf);
    }
    return view;
  }

  private void handOver(ByteBuf frame) {
    ConnectionEngine e = engine;
    if (e != null) {
      e.onFrame(frame);
    } else {
      listener.onFrame(frame);
    }
  }

  /**
   * RFC 6455 frames from the cumulation {@code buf}: a whole binary message is lent in place, as
   * over TCP; fragments, control frames and what arrives while closing are cut out as slices.
   */
  private void lendWebSocketFrames(ByteBuf buf) {
    while (!suspended && !failed && buf.readableBytes() >= 2) {
      int at = buf.readerIndex();
      int b0 = buf.getUnsignedByte(at);
      int b1 = buf.getUnsignedByte(at + 1);
      boolean fin = (b0 & 0x80) != 0;
      int opcode = b0 & 0x0F;
      boolean masked = (b1 & 0x80) != 0;
      int header = 2;
      long length = b1 & 0x7F;
      if (length == 126) {
        if (buf.readableBytes() < 4) {
          return;
        }
        length = buf.getUnsignedShort(at + 2);
        header = 4;
      } else if (length == 127) {
        if (buf.readableBytes() < 10) {
          return;
        }
        length = buf.getLong(at + 2);
        header = 10;
      }
      if ((b0 & 0x70) != 0 || masked == client || length < 0) {
        violation(WebSocketCloseStatus.PROTOCOL_ERROR, "a malformed WebSocket frame");
        return;
      }
      boolean control = opcode >= WebSocketFraming.OPCODE_CLOSE;
      if (control && (!fin || length > 125)) {
        violation(WebSocketCloseStatus.PROTOCOL_ERROR, "a fragmented or long control frame");
        return;
      }
      long message = length + (fragments == null || control ? 0 : fragments.readableBytes());
      if (!control && message > maxFrameLength) {
        failed = true;
        releaseCumulation();
        listener.onFrameTooLong(message);
        return;
      }
      int payload = header + (masked ? 4 : 0);
      if (buf.readableBytes() < payload + length) {
        return;
      }
      int start = at + payload;
      if (masked) {
        WebSocketFraming.mask(buf, start, length, buf.getInt(at + header));
      }
      if (opcode == WebSocketFraming.OPCODE_BINARY && fin && fragments == null && !discarding) {
        if (!lend(buf, start, start + (int) length)) {
          return;
        }
        continue;
      }
      buf.readerIndex(start);
      ByteBuf body = buf.readRetainedSlice((int) length);
      if (!webSocketFrame(opcode, fin, body) || cumulation == null) {
        return; // failed, or the channel closed while handling the frame
      }
    }
  }

  /** One WebSocket frame's payload (released here); false when the connection failed. */
  private boolean webSocketFrame(int opcode, boolean fin, ByteBuf body) {
    if (discarding && opcode < WebSocketFraming.OPCODE_CLOSE) {
      body.release(); // closing: data is dropped
      return true;
    }
    switch (opcode) {
      case WebSocketFraming.OPCODE_BINARY:
        if (fragments != null) {
          body.release();
          violation(WebSocketCloseStatus.PROTOCOL_ERROR, "a new message inside a fragmented one");
          return false;
        }
        if (fin) {
          deliver(body);
        } else {
          fragments = ctx.alloc().buffer(body.readableBytes() * 2);
          fragments.writeBytes(body);
          body.release();
        }
        return true;
      case WebSocketFraming.OPCODE_CONTINUATION:
        if (fragments == null) {
          body.release();
          violation(WebSocketCloseStatus.PROTOCOL_ERROR, "a continuation frame with no message");
          return false;
        }
        fragments.writeBytes(body);
        body.release();
        if (fin) {
          ByteBuf whole = fragments;
          fragments = null;
          deliver(whole);
        }
        return true;
      case WebSocketFraming.OPCODE_PING:
        transport.writeControl(WebSocketFraming.OPCODE_PONG, body);
        body.release();
        return true;
      case WebSocketFraming.OPCODE_PONG:
        body.release();
        return true;
      case WebSocketFraming.OPCODE_CLOSE:
        body.release();
        peerEnded(ctx);
        return true;
      case WebSocketFraming.OPCODE_TEXT:
        body.release();
        violation(
            WebSocketCloseStatus.INVALID_MESSAGE_TYPE,
            "a text WebSocket message: RSocket frames are binary messages");
        return false;
      default:
        body.release();
        violation(WebSocketCloseStatus.PROTOCOL_ERROR, "an unknown WebSocket opcode " + opcode);
        return false;
    }
  }

  /** A WebSocket protocol violation: the peer is told with a Close, then the connection closes. */
  private void violation(WebSocketCloseStatus status, String reason) {
    failed = true;
    releaseCumulation();
    transport.closeWith(status); // the Close first: nothing the engine writes may follow it
    listener.onTransportError(new DecoderException(reason));
  }

  private void readMessage(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof CloseWebSocketFrame) {
      ((CloseWebSocketFrame) msg).release();
      if (peerClosed) {
        return;
      }
      peerEnded(ctx);
      return;
    }
    if (!(msg instanceof BinaryWebSocketFrame)) {
      // Pings and pongs are answered and dropped before this handler; text is not RSocket.
      ReferenceCountUtil.release(msg);
      if (!failed && !discarding && msg instanceof TextWebSocketFrame) {
        failed = true;
        listener.onTransportError(
            new DecoderException("a text WebSocket message: RSocket frames are binary messages"));
        ctx.close();
      }
      return;
    }
    ByteBuf frame = ((BinaryWebSocketFrame) msg).content();
    if (failed || discarding) {
      frame.release();
      return;
    }
    if (suspended) {
      if (pendingMessages == null) {
        pendingMessages = new ArrayDeque<>();
      }
      pendingMessages.add(frame);
      return;
    }
    deliver(frame);
  }

  /** Hands one message to the engine, lent as every frame is, and releases it. */
  private void deliver(ByteBuf frame) {
    try {
      handOver(new LentFrame(frame));
    } finally {
      frame.release();
    }
  }

  /** Hands queued messages to the engine until it suspends reading again. */
  private void deliverPendingMessages() {
    ArrayDeque<ByteBuf> pending = pendingMessages;
    while (pending != null && !suspended && !failed && !discarding && !pending.isEmpty()) {
      deliver(pending.poll());
    }
  }

  /**
   * Over WebSocket, the peer will send nothing more (its Close, or the end of its TCP stream): the
   * engine hears of it, or, when this side is closing too and its own Close is out, the connection
   * closes.
   */
  private void peerEnded(ChannelHandlerContext ctx) {
    if (peerClosed) {
      return;
    }
    peerClosed = true;
    if (!transport.isClosing()) {
      listener.onInputClosed();
    } else if (transport.isCloseSent()) {
      ctx.close(); // the closing handshake is complete
    }
    // Closing, own Close not written yet: the transport closes once it is.
  }

  /** Whether the peer sent its WebSocket Close (its end of stream over WebSocket). */
  boolean peerClosed() {
    return peerClosed;
  }

  /** The engine's {@code setReading}: stop at once, or resume from a task of its own. */
  void setReading(boolean reading) {
    if (discarding) {
      return; // closing: keep reading (and dropping) to see the peer's end of stream
    }
    if (!reading) {
      suspended = true;
      ctx.channel().config().setAutoRead(false);
      return;
    }
    if (suspended) {
      suspended = false;
      ctx.executor().execute(resumeTask);
    }
  }

  private void resume() {
    if (suspended || discarding || failed) {
      return;
    }
    if (cumulation != null) {
      deliverFrames();
      listener.onReadComplete();
    } else if (pendingMessages != null && !pendingMessages.isEmpty()) {
      deliverPendingMessages();
      listener.onReadComplete();
    }
    if (!suspended) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  /** The connection is closing: drop whatever arrives and keep reading, to see the peer's end. */
  void discardInput() {
    discarding = true;
    suspended = false;
    if (messages && rawWebSocket) {
      // Frames are still read, to find the peer's Close: a frame half-read stays whole.
      releaseMessages();
      if (cumulation != null && !failed) {
        ctx.executor().execute(this::deliverLeftovers);
      }
    } else {
      releaseCumulation();
    }
    ctx.channel().config().setAutoRead(true);
  }

  private void deliverLeftovers() {
    if (cumulation != null && !failed) {
      deliverFrames();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (!discarding) {
      listener.onReadComplete();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    listener.onWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      if (messages) {
        peerEnded(ctx); // without a Close message: nothing more can come either way
      } else if (!transport.isClosing()) {
        listener.onInputClosed();
      } else if (transport.isOutputShutdown()) {
        ctx.close(); // both directions are done
      }
      // Closing, output not shut down yet: the graceful close closes once its last write is out.
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    inactive = true;
    releaseCumulation();
    transport.releaseBatch();
    listener.onTransportClosed();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseCumulation();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (messages && !failed && isTooLong(cause)) {
      // A WebSocket message (or its fragments together) above the frame limit: the decoder has
      // dropped it and what follows; the engine answers CONNECTION_ERROR as over TCP.
      failed = true;
      releaseCumulation();
      listener.onFrameTooLong(maxFrameLength + 1L);
      return;
    }
    listener.onTransportError(cause);
    ctx.close();
  }

  private static boolean isTooLong(Throwable cause) {
    return cause instanceof TooLongFrameException
        || cause instanceof CorruptedWebSocketFrameException
            && ((CorruptedWebSocketFrameException) cause).closeStatus()
                == WebSocketCloseStatus.MESSAGE_TOO_BIG;
  }

  private void releaseCumulation() {
    ByteBuf c = cumulation;
    cumulation = null; // first: a release that throws must not leave it to be released again
    lentView = null;
    if (c != null && c.refCnt() > 0) {
      c.release();
    }
    releaseArrivedWhileDelivering();
    releaseMessages();
  }

  /** Drops queued messages and a fragmented message in progress. */
  private void releaseMessages() {
    ArrayDeque<ByteBuf> pending = pendingMessages;
    if (pending != null) {
      for (ByteBuf frame; (frame = pending.poll()) != null; ) {
        frame.release();
      }
    }
    if (fragments != null) {
      fragments.release();
      fragments = null;
    }
  }
}
