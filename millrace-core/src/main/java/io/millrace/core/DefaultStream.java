package io.millrace.core;

import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;

/**
 * One stream's state: flow control in both directions and its place in the connection.
 *
 * <p>Flow-control design. Each half keeps its credit in a {@code long}: {@link #outboundCredit} is
 * what the peer granted and this side has not used, {@link #inboundCredit} what this side granted
 * and the peer has not used. Grants add with saturation and a grant of 2^31-1 (the wire's largest
 * n), or a running total that reaches {@link Long#MAX_VALUE}, means unbounded: the counter is then
 * never decremented, so a stream never stalls after 2^31-1 messages the way a 32-bit counter would.
 * A peer that sends a payload without credit is not buffered: the engine closes the connection with
 * CONNECTION_ERROR, since the peer has broken the protocol.
 *
 * <p>A stream is registered with the engine from its request until both halves are done: the
 * outbound half ends by complete, error or the peer's CANCEL; the inbound half by the peer's
 * complete or error, or this side's cancel. Halves that an interaction lacks start done.
 *
 * <p>Confined to the connection's event loop; no field is shared across threads.
 */
final class DefaultStream implements Stream {
  static final int REQUEST_RESPONSE = 1;
  static final int REQUEST_STREAM = 2;
  static final int REQUEST_CHANNEL = 3;
  static final int FIRE_AND_FORGET = 4;

  final ConnectionEngine engine;
  final int kind;
  final boolean requester;
  int id;
  StreamListener listener;
  long outboundCredit;
  long inboundCredit;
  boolean outboundDone;
  boolean inboundDone;
  Reassembly reassembly;

  /** Links of {@link StreamQueue}: the producers waiting for the transport to drain. */
  DefaultStream waitPrev;

  DefaultStream waitNext;
  boolean waiting;

  DefaultStream(ConnectionEngine engine, int kind, boolean requester, StreamListener listener) {
    this.engine = engine;
    this.kind = kind;
    this.requester = requester;
    this.listener = listener == null ? StreamListener.NOOP : listener;
  }

  @Override
  public int streamId() {
    return id;
  }

  @Override
  public Connection connection() {
    return engine;
  }

  @Override
  public long credit() {
    return outboundDone ? 0 : outboundCredit;
  }

  @Override
  public boolean isReady() {
    if (outboundDone || outboundCredit <= 0) {
      return false;
    }
    if (engine.transportWritable()) {
      return true;
    }
    engine.awaitWritable(this);
    return false;
  }

  @Override
  public void next(ByteBuf metadata, ByteBuf data) {
    send(metadata, data, FrameHeader.FLAG_NEXT);
  }

  @Override
  public void nextAndComplete(ByteBuf metadata, ByteBuf data) {
    send(metadata, data, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE);
  }

  private void send(ByteBuf metadata, ByteBuf data, int flags) {
    engine.checkInEventLoop();
    if (!hasOutboundHalf()) {
      release(metadata, data);
      throw new IllegalStateException("this side of the stream does not send payloads");
    }
    if (outboundDone) {
      // Cancelled by the peer or already ended: a producer racing with CANCEL is not a bug.
      release(metadata, data);
      return;
    }
    if (outboundCredit <= 0) {
      release(metadata, data);
      throw new IllegalStateException("no credit: the peer has not requested more payloads");
    }
    if (outboundCredit != Long.MAX_VALUE) {
      outboundCredit--;
    }
    if (kind == REQUEST_RESPONSE) {
      flags |= FrameHeader.FLAG_COMPLETE;
    }
    try {
      engine.writer().payload(id, flags, metadata, data);
    } catch (RuntimeException e) {
      // An unreadable buffer (released by mistake): this stream fails, the connection does not.
      engine.logUnusableBuffer(this, e);
      failBothWays(ErrorCode.APPLICATION_ERROR, "the application sent an unusable payload buffer");
      return;
    }
    if ((flags & FrameHeader.FLAG_COMPLETE) != 0) {
      outboundDone = true;
      endIfDone();
    }
  }

  @Override
  public void complete() {
    engine.checkInEventLoop();
    if (outboundDone || !hasOutboundHalf()) {
      return;
    }
    outboundDone = true;
    engine.writer().complete(id);
    endIfDone();
  }

  @Override
  public void error(int errorCode, String message) {
    engine.checkInEventLoop();
    if (outboundDone && inboundDone) {
      return;
    }
    outboundDone = true;
    inboundDone = true;
    if (id != 0) {
      engine.writer().error(id, errorCode, message);
    }
    end();
  }

  @Override
  public void request(long n) {
    engine.checkInEventLoop();
    if (n <= 0) {
      throw new IllegalArgumentException("request-n must be positive: " + n);
    }
    if (inboundDone || kind == REQUEST_RESPONSE || inboundCredit == Long.MAX_VALUE) {
      return;
    }
    long total = inboundCredit + n;
    inboundCredit = n >= Integer.MAX_VALUE || total < 0 ? Long.MAX_VALUE : total;
    engine.writer().requestN(id, n);
  }

  @Override
  public void cancel() {
    engine.checkInEventLoop();
    if (inboundDone) {
      return;
    }
    inboundDone = true;
    if (requester) {
      // A requester's CANCEL ends the whole stream, a channel's outbound half included (spec:
      // "upon sending a CANCEL, the stream is terminated on the Requester"; rsocket-java does the
      // same). Only a channel responder's cancel leaves its outbound half open.
      outboundDone = true;
    }
    if (id != 0) {
      engine.writer().cancel(id);
    }
    endIfDone();
  }

  boolean hasOutboundHalf() {
    return requester ? kind == REQUEST_CHANNEL : kind != FIRE_AND_FORGET;
  }

  // ---- inbound events, called by the engine ----

  /**
   * A complete (reassembled) PAYLOAD. Returns false when the peer sent without credit: the caller
   * closes the connection.
   */
  boolean onPayload(int flags, ByteBuf metadata, ByteBuf data) {
    if (inboundDone) {
      return true;
    }
    if ((flags & FrameHeader.FLAG_NEXT) != 0) {
      if (!takeInboundCredit()) {
        return false;
      }
      deliverNext(flags, metadata, data);
    } else if ((flags & FrameHeader.FLAG_COMPLETE) != 0) {
      inboundDone = true;
      notifyComplete();
    }
    return true;
  }

  /** Takes one unit of inbound credit for a fragmented payload at its first fragment. */
  boolean takeInboundCredit() {
    if (inboundCredit <= 0) {
      return false;
    }
    if (inboundCredit != Long.MAX_VALUE) {
      inboundCredit--;
    }
    return true;
  }

  /** Delivers a payload (whole or reassembled) whose credit {@link #takeInboundCredit} took. */
  void deliverNext(int flags, ByteBuf metadata, ByteBuf data) {
    if (inboundDone) {
      return;
    }
    boolean completes = (flags & FrameHeader.FLAG_COMPLETE) != 0 || kind == REQUEST_RESPONSE;
    if (completes) {
      inboundDone = true;
    }
    try {
      listener.onNext(this, metadata, data);
    } catch (RuntimeException e) {
      engine.listenerFailed(this, e);
      endIfDone();
      return;
    }
    if (completes) {
      notifyComplete();
    }
  }

  /** The channel responder saw the requester's side complete in the request frame itself. */
  void markInboundComplete() {
    inboundDone = true;
  }

  private void notifyComplete() {
    endIfDone();
    try {
      listener.onComplete(this);
    } catch (RuntimeException e) {
      engine.listenerFailed(this, e);
    }
  }

  void onRequestN(int n) {
    if (outboundDone) {
      return;
    }
    addOutboundCredit(n);
    notifyReady();
  }

  /** Adds a grant from the peer: saturating, and 2^31-1 means unbounded. */
  void addOutboundCredit(int n) {
    if (n == Integer.MAX_VALUE) {
      outboundCredit = Long.MAX_VALUE;
    } else if (outboundCredit != Long.MAX_VALUE) {
      long total = outboundCredit + n;
      outboundCredit = total < 0 ? Long.MAX_VALUE : total;
    }
  }

  void notifyReady() {
    if (isReady()) {
      try {
        listener.onReady(this);
      } catch (RuntimeException e) {
        engine.listenerFailed(this, e);
      }
    }
  }

  void onCancel() {
    if (outboundDone) {
      return;
    }
    outboundDone = true;
    if (!requester) {
      // The requester cancelled: the stream is over on this side too, a channel's inbound half
      // included. A channel requester that sees CANCEL only stops sending.
      inboundDone = true;
    }
    endIfDone();
    try {
      listener.onCancel(this);
    } catch (RuntimeException e) {
      engine.listenerFailed(this, e);
    }
  }

  /** Ends the stream with an error from the peer or a local failure; notifies the listener. */
  void onError(int errorCode, String message) {
    if (outboundDone && inboundDone) {
      end(); // idempotent: releases anything still held
      return;
    }
    outboundDone = true;
    inboundDone = true;
    end();
    try {
      listener.onError(this, errorCode, message);
    } catch (RuntimeException e) {
      engine.logListenerFailure(this, e);
    }
  }

  /**
   * Ends the stream on this side's initiative: ERROR to the peer and {@code onError} to the
   * listener.
   */
  void failBothWays(int errorCode, String message) {
    if (outboundDone && inboundDone) {
      return;
    }
    outboundDone = true;
    inboundDone = true;
    engine.writer().error(id, errorCode, message);
    end();
    try {
      listener.onError(this, errorCode, message);
    } catch (RuntimeException e) {
      engine.logListenerFailure(this, e);
    }
  }

  /** Fails a request that could not be sent, before it had an id. */
  void failLocally(int errorCode, String message) {
    outboundDone = true;
    inboundDone = true;
    try {
      listener.onError(this, errorCode, message);
    } catch (RuntimeException e) {
      engine.logListenerFailure(this, e);
    }
  }

  private void endIfDone() {
    if (outboundDone && inboundDone) {
      end();
    }
  }

  private void end() {
    if (reassembly != null) {
      engine.releaseReassembly(reassembly);
      reassembly = null;
    }
    engine.remove(this);
  }

  static void release(ByteBuf metadata, ByteBuf data) {
    if (metadata != null) {
      metadata.release();
    }
    if (data != null) {
      data.release();
    }
  }

  @Override
  public String toString() {
    return "Stream[" + id + (requester ? " requester" : " responder") + " kind=" + kind + "]";
  }
}
