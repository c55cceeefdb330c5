package io.millrace.grpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.collection.IntObjectHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Drains an HTTP/2 connection spliced to the endpoint's grpc-java server, as grpc-java drains a
 * connection of its own when its server shuts down: GOAWAY (last stream 2^31-1, NO_ERROR) and a
 * PING; once the caller has answered the PING it has seen the GOAWAY and opens no more calls, and
 * the connection closes as soon as the calls it had opened are over. grpc-java's server cannot be
 * asked to do this for one of its connections, so this handler, on the caller's channel, follows
 * the frames both ways (their 9-byte headers; payloads are skipped), puts GOAWAY and PING in
 * between two of grpc-java's frames, and keeps the PING's answer from grpc-java.
 *
 * <p>A call is open from the caller's HEADERS that start a stream until grpc-java ends the stream
 * (END_STREAM on its trailers) or either side resets it. Everything runs on the caller's channel's
 * loop: what it reads passes here inbound, and what grpc-java writes to it passes here outbound.
 * Until {@link #drain()} the bytes pass untouched.
 */
final class Http2Drain extends ChannelDuplexHandler {
  static final int FRAME_HEADER_BYTES = 9;

  /** "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", before the caller's first frame. */
  static final int PREFACE_BYTES = 24;

  static final int DATA = 0x0;
  static final int HEADERS = 0x1;
  static final int RST_STREAM = 0x3;
  static final int PUSH_PROMISE = 0x5;
  static final int PING = 0x6;
  static final int GOAWAY = 0x7;
  static final int CONTINUATION = 0x9;
  static final int END_STREAM = 0x1;
  static final int END_HEADERS = 0x4;
  static final int ACK = 0x1;

  /** The PING this handler sends: "millrace" in ASCII, so that its answer can be told apart. */
  static final long DRAIN_PING = 0x6d696c6c72616365L;

  /** How long the PING's answer is waited for before the calls are counted anyway (grpc-java's). */
  static final long PING_WAIT_SECONDS = 10;

  private final FrameScanner fromCaller = new FrameScanner(PREFACE_BYTES);
  private final FrameScanner toCaller = new FrameScanner(0);

  /** Streams the caller opened whose calls are not over. */
  private final IntObjectHashMap<Boolean> open = new IntObjectHashMap<>();

  private int lastOpened;
  private ChannelHandlerContext ctx;

  private boolean goAwayWanted;
  private boolean goAwaySent;

  /**
   * grpc-java sent GOAWAY of its own (its server closing, a connection age or a keepalive policy):
   * it drains the connection itself, and a GOAWAY from here, whose last stream would be higher than
   * the one grpc-java gave, would be a protocol error.
   */
  private boolean grpcGoingAway;

  /** The stream whose trailers' header block grpc-java is still writing (its END_STREAM seen). */
  private int endingStream;

  /** The PING was sent and its answer has not come: frames from the caller are looked at. */
  private boolean pingOutstanding;

  /** The caller has seen the GOAWAY (or stopped answering): the connection ends with its calls. */
  private boolean draining;

  private boolean closing;

  /** The caller's frame under way while its PING answer is waited for, not yet passed on. */
  private ByteBuf held;

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /** Calls the caller has open (for tests). */
  int openCalls() {
    return open.size();
  }

  /**
   * Starts the drain: GOAWAY and PING at grpc-java's next frame boundary (after its SETTINGS, the
   * first frame a server sends). On the channel's loop.
   */
  void drain() {
    if (goAwayWanted || !ctx.channel().isActive()) {
      return;
    }
    goAwayWanted = true;
    if (mayGoAway()) {
      sendGoAway();
      ctx.flush();
    }
  }

  /** GOAWAY may go out now: between two whole frames (not within a header block) of grpc-java's. */
  private boolean mayGoAway() {
    return goAwayWanted && !goAwaySent && !grpcGoingAway && toCaller.betweenFrames();
  }

  private void sendGoAway() {
    goAwaySent = true;
    pingOutstanding = true;
    ByteBuf frames = ctx.alloc().buffer(2 * FRAME_HEADER_BYTES + 16);
    frames.writeMedium(8).writeByte(GOAWAY).writeByte(0).writeInt(0);
    frames.writeInt(Integer.MAX_VALUE).writeInt(0); // last stream, NO_ERROR
    frames.writeMedium(8).writeByte(PING).writeByte(0).writeInt(0);
    frames.writeLong(DRAIN_PING);
    ctx.write(frames, ctx.newPromise());
    ctx.executor()
        .schedule(
            () -> {
              if (pingOutstanding) {
                startCounting(); // a late answer is still kept from grpc-java, which would warn
              }
            },
            PING_WAIT_SECONDS,
            TimeUnit.SECONDS);
  }

  private void startCounting() {
    draining = true;
    closeIfDone();
  }

  private void closeIfDone() {
    if (draining && !closing && open.isEmpty()) {
      closing = true;
      // Once the frame being read or written has passed (a task after this one), and after what
      // is written by then: an empty write completes once all before it have.
      ctx.executor()
          .execute(
              () ->
                  ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)
                      .addListener(ChannelFutureListener.CLOSE));
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf buf)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (!pingOutstanding && held == null) {
      int end = buf.writerIndex();
      for (int i = buf.readerIndex(); i < end; ) {
        i = fromCaller.scan(buf, i, end);
        if (fromCaller.frameEnded()) {
          onCallerFrame();
        }
      }
      ctx.fireChannelRead(buf);
      return;
    }
    readWhileAwaitingPing(buf);
  }

  /**
   * Passes on what the caller sent, but for the answer to the drain's PING. A frame whose header
   * (and, for a PING answer, its 8 bytes) lies within this read is judged in place; one split
   * across reads is held until it can be.
   */
  private void readWhileAwaitingPing(ByteBuf buf) {
    int start = buf.readerIndex();
    int end = buf.writerIndex();
    int from = start; // the first byte neither passed on nor held
    int i = start;
    boolean whole = held == null; // the buffer goes on as it is unless something is cut or held
    try {
      while (i < end) {
        if (held == null && pingOutstanding && fromCaller.atFrameStart()) {
          int left = end - i;
          if (left >= FRAME_HEADER_BYTES + 8 && isDrainPingAnswer(buf, i)) {
            passOn(buf, from, i);
            for (int k = i, to = i + FRAME_HEADER_BYTES + 8; k < to; ) {
              k = fromCaller.scan(buf, k, to);
            }
            i += FRAME_HEADER_BYTES + 8;
            from = i;
            whole = false;
            answered();
            continue;
          }
          if (left < FRAME_HEADER_BYTES
              || (left < FRAME_HEADER_BYTES + 8 && isPingAnswer(buf, i))) {
            passOn(buf, from, i); // split across reads: held until it can be judged
            held = ctx.alloc().heapBuffer(FRAME_HEADER_BYTES + 8);
            from = i;
            whole = false;
          }
        }
        int next = fromCaller.scan(buf, i, end);
        if (held != null) {
          held.writeBytes(buf, i, next - i);
          from = next;
        }
        i = next;
        if (held != null && fromCaller.headerEnded() && !fromCaller.isPingAnswer()) {
          ctx.fireChannelRead(held); // not the answer: it goes on, and so does its payload
          held = null;
        }
        if (fromCaller.frameEnded()) {
          onCallerFrame();
          if (held != null) {
            if (fromCaller.pingData() == DRAIN_PING) {
              held.release();
              answered();
            } else {
              ctx.fireChannelRead(held);
            }
            held = null;
          }
        }
      }
      if (whole) {
        ctx.fireChannelRead(buf.retain());
      } else {
        passOn(buf, from, end);
      }
    } finally {
      buf.release();
    }
  }

  /** The caller has answered the drain's PING: it has seen the GOAWAY. */
  private void answered() {
    pingOutstanding = false;
    startCounting();
  }

  /** A PING answer with the usual 8 bytes starts at {@code i}. */
  private static boolean isPingAnswer(ByteBuf buf, int i) {
    return buf.getUnsignedMedium(i) == 8
        && buf.getUnsignedByte(i + 3) == PING
        && (buf.getUnsignedByte(i + 4) & ACK) != 0;
  }

  /** The answer to the drain's PING starts at {@code i} (its 17 bytes are there). */
  private static boolean isDrainPingAnswer(ByteBuf buf, int i) {
    return isPingAnswer(buf, i) && buf.getLong(i + FRAME_HEADER_BYTES) == DRAIN_PING;
  }

  private void passOn(ByteBuf buf, int from, int to) {
    if (to > from) {
      ctx.fireChannelRead(buf.retainedSlice(from, to - from));
    }
  }

  private void onCallerFrame() {
    int type = fromCaller.type();
    int stream = fromCaller.stream();
    if (type == HEADERS && stream > lastOpened && (stream & 1) == 1) {
      lastOpened = stream;
      open.put(stream, Boolean.TRUE);
    } else if (type == RST_STREAM) {
      callOver(stream);
    }
  }

  private void callOver(int stream) {
    if (open.remove(stream) != null) {
      closeIfDone();
    }
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (!(msg instanceof ByteBuf buf)) {
      ctx.write(msg, promise);
      return;
    }
    int start = buf.readerIndex();
    int end = buf.writerIndex();
    if (mayGoAway()) {
      sendGoAway();
    }
    for (int i = start; i < end; ) {
      i = toCaller.scan(buf, i, end);
      if (toCaller.frameEnded()) {
        onGrpcFrame();
        if (mayGoAway()) {
          // GOAWAY goes in right after this frame; the rest follows it.
          ctx.write(buf.retainedSlice(start, i - start), ctx.newPromise());
          sendGoAway();
          scanRest(buf, i, end);
          ctx.write(buf.retainedSlice(i, end - i), promise);
          buf.release();
          return;
        }
      }
    }
    ctx.write(buf, promise);
  }

  private void scanRest(ByteBuf buf, int i, int end) {
    while (i < end) {
      i = toCaller.scan(buf, i, end);
      if (toCaller.frameEnded()) {
        onGrpcFrame();
      }
    }
  }

  private void onGrpcFrame() {
    int type = toCaller.type();
    int flags = toCaller.flags();
    int stream = toCaller.stream();
    if (type == RST_STREAM || (type == DATA && (flags & END_STREAM) != 0)) {
      callOver(stream);
    } else if (type == HEADERS && (flags & END_STREAM) != 0) {
      if ((flags & END_HEADERS) != 0) {
        callOver(stream);
      } else {
        endingStream = stream; // over once its CONTINUATION frames have passed
      }
    } else if (type == CONTINUATION && (flags & END_HEADERS) != 0 && endingStream == stream) {
      endingStream = 0;
      callOver(stream);
    } else if (type == GOAWAY) {
      grpcGoingAway = true;
    }
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (held != null) {
      held.release();
      held = null;
    }
  }

  /**
   * Follows a byte stream of HTTP/2 frames across reads: {@link #scan} stops where a frame's header
   * ends and where the frame ends, so that the frame just read can be looked at.
   */
  static final class FrameScanner {
    private int skip; // preface bytes still to pass
    private int headerSeen; // bytes of the current frame's header read so far
    private int length;
    private int type;
    private int flags;
    private int stream;
    private int payloadLeft;
    private long pingData;
    private boolean sawFrame;
    private boolean inHeaderBlock; // a HEADERS or PUSH_PROMISE without END_HEADERS has passed
    private boolean headerEnded;
    private boolean frameEnded;

    FrameScanner(int preface) {
      this.skip = preface;
    }

    /** Past the preface, at the first byte of a frame. */
    boolean atFrameStart() {
      return skip == 0 && headerSeen == 0 && payloadLeft == 0;
    }

    /**
     * At least one whole frame has passed, the next has not started, and no header block is open
     * (its CONTINUATION frames must follow it at once).
     */
    boolean betweenFrames() {
      return sawFrame && !inHeaderBlock && atFrameStart();
    }

    /** The last {@link #scan} ended on the last byte of a frame's header. */
    boolean headerEnded() {
      return headerEnded;
    }

    /** The last {@link #scan} ended on the last byte of a frame. */
    boolean frameEnded() {
      return frameEnded;
    }

    int type() {
      return type;
    }

    int flags() {
      return flags;
    }

    int stream() {
      return stream;
    }

    /** The current frame is a PING's answer with the usual 8 bytes. */
    boolean isPingAnswer() {
      return type == PING && (flags & ACK) != 0 && length == 8;
    }

    /** The 8 bytes of the PING just read. */
    long pingData() {
      return pingData;
    }

    /**
     * Moves over bytes {@code [i, end)} of {@code buf} up to the end of the next frame header or
     * frame, whichever comes first; returns where it stopped.
     */
    int scan(ByteBuf buf, int i, int end) {
      headerEnded = false;
      frameEnded = false;
      if (skip > 0) {
        int n = Math.min(skip, end - i);
        skip -= n;
        return i + n;
      }
      if (payloadLeft > 0) {
        int n = Math.min(payloadLeft, end - i);
        if (type == PING) {
          for (int k = 0; k < n; k++) {
            pingData = (pingData << 8) | buf.getUnsignedByte(i + k);
          }
        }
        payloadLeft -= n;
        if (payloadLeft == 0) {
          frameEnd();
        }
        return i + n;
      }
      while (i < end) {
        int b = buf.getUnsignedByte(i++);
        switch (headerSeen++) {
          case 0 -> length = b;
          case 1, 2 -> length = (length << 8) | b;
          case 3 -> type = b;
          case 4 -> flags = b;
          case 5 -> stream = b & 0x7f;
          default -> stream = (stream << 8) | b;
        }
        if (headerSeen == FRAME_HEADER_BYTES) {
          headerSeen = 0;
          payloadLeft = length;
          pingData = 0;
          headerEnded = true;
          if (length == 0) {
            frameEnd();
          }
          return i;
        }
      }
      return i;
    }

    private void frameEnd() {
      frameEnded = true;
      sawFrame = true;
      if (type == HEADERS || type == PUSH_PROMISE || type == CONTINUATION) {
        inHeaderBlock = (flags & END_HEADERS) == 0;
      }
    }
  }
}
