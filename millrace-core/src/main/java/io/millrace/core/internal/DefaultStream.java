package io.millrace.core.internal;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

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
 * complete or error, or this side's cancel. Halves that an interaction lacks start done. A
 * requester's CANCEL ends both halves on both sides; a channel responder's CANCEL ends only the
 * channel's requester-to-responder half.
 *
 * <p>Confined to the connection's event loop, except {@link #published}: the done and cancelled
 * bits copied there with a release store at each transition, for the state queries other threads
 * may make.
 */
final class DefaultStream implements Stream {
  static final int REQUEST_RESPONSE = 1;
  static final int REQUEST_STREAM = 2;
  static final int REQUEST_CHANNEL = 3;
  static final int FIRE_AND_FORGET = 4;

  private static final int PUBLISHED_OUTBOUND_DONE = 1;
  private static final int PUBLISHED_INBOUND_DONE = 2;
  private static final int PUBLISHED_CANCELLED = 4;
  private static final VarHandle PUBLISHED;

  static {
    try {
      PUBLISHED = MethodHandles.lookup().findVarHandle(DefaultStream.class, "published", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final ConnectionEngine engine;
  final int kind;
  final boolean requester;
  int id;
  StreamListener listener;
  long outboundCredit;
  long inboundCredit;
  boolean outboundDone;
  boolean inboundDone;
  private boolean cancelled;
  Reassembly reassembly;

  /** Written with release stores on the loop, read with acquire loads anywhere. */
  @SuppressWarnings("unused") // accessed through PUBLISHED
  private int published;

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
  public boolean isCancelled() {
    return ((int) PUBLISHED.getAcquire(this) & PUBLISHED_CANCELLED) != 0;
  }

  @Override
  public boolean isInboundDone() {
    return ((int) PUBLISHED.getAcquire(this) & PUBLISHED_INBOUND_DONE) != 0;
  }

  @Override
  public boolean isOutboundDone() {
    return ((int) PUBLISHED.getAcquire(this) & PUBLISHED_OUTBOUND_DONE) != 0;
  }

  /**
   * Copies the loop's view of the stream's state for other threads. A release store: a reader that
   * sees the bits also sees everything the loop did before the transition.
   */
  private void publish() {
    PUBLISHED.setRelease(
        this,
        (outboundDone ? PUBLISHED_OUTBOUND_DONE : 0)
            | (inboundDone ? PUBLISHED_INBOUND_DONE : 0)
            | (cancelled ? PUBLISHED_CANCELLED : 0));
  }

  void markOutboundDone() {
    outboundDone = true;
    publish();
  }

  void markInboundDone() {
    inboundDone = true;
    publish();
  }

  private void markBothDone() {
    outboundDone = true;
    inboundDone = true;
    publish();
  }

  @Override
  public boolean isReady() {
    if (outboundDone || outboundCredit <= 0) {
      return false;
    }
    if (!engine.transportWritable()) {
      engine.awaitWritable(this);
      return false;
    }
    if (engine.flusher.turnUsedUp()) {
      engine.awaitTurn(this);
      return false;
    }
    return true;
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
      markOutboundDone();
      endIfDone();
    }
  }

  @Override
  public void complete() {
    engine.checkInEventLoop();
    if (outboundDone || !hasOutboundHalf()) {
      return;
    }
    markOutboundDone();
    engine.writer().complete(id);
    endIfDone();
  }

  @Override
  public void error(int errorCode, String message) {
    engine.checkInEventLoop();
    if (outboundDone && inboundDone) {
      return;
    }
    markBothDone();
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
    cancelled = true;
    if (requester) {
      // A requester's CANCEL ends the whole stream, a channel's outbound half included (spec:
      // "upon sending a CANCEL, the stream is terminated on the Requester"; rsocket-java does the
      // same). Only a channel responder's cancel leaves its outbound half open.
      outboundDone = true;
    }
    publish();
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
      markInboundDone();
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
      markInboundDone();
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
    cancelled = true;
    if (!requester) {
      // The requester cancelled: the stream is over on this side too, a channel's inbound half
      // included. A channel requester that sees CANCEL only stops sending.
      inboundDone = true;
    }
    publish();
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
    markBothDone();
    end();
    notifyError(errorCode, message);
  }

  /**
   * Ends the stream on this side's initiative: ERROR to the peer and {@code onError} to the
   * listener.
   */
  void failBothWays(int errorCode, String message) {
    if (outboundDone && inboundDone) {
      return;
    }
    markBothDone();
    engine.writer().error(id, errorCode, message);
    end();
    notifyError(errorCode, message);
  }

  /** Fails a request that could not be sent (it has no id, or its id was never used). */
  void failLocally(int errorCode, String message) {
    markBothDone();
    notifyError(errorCode, message);
  }

  private void notifyError(int errorCode, String message) {
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
