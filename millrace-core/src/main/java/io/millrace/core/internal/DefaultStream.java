package io.millrace.core.internal;

import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
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
 * <p>Confined to the connection's event loop, except {@link #bits}: the done and cancelled flags,
 * written with release stores, for the state queries other threads may make.
 */
final class DefaultStream implements Stream {
  static final int REQUEST_RESPONSE = 1;
  static final int REQUEST_STREAM = 2;
  static final int REQUEST_CHANNEL = 3;
  static final int FIRE_AND_FORGET = 4;

  /** {@link #bits}: this side sends nothing more. */
  static final int OUTBOUND_DONE = 1;

  /** {@link #bits}: nothing more arrives from the peer. */
  static final int INBOUND_DONE = 2;

  /** {@link #bits}: cancelled by either side. */
  static final int CANCELLED = 4;

  /** {@link #bits}: queued in the engine's waiting producers. */
  static final int WAITING = 8;

  /** {@link #bits}, fixed at construction: this side opened the stream. */
  private static final int REQUESTER = 16;

  /** {@link #bits}, fixed at construction: the interaction, from this bit up. */
  private static final int KIND_SHIFT = 5;

  private static final VarHandle BITS;

  static {
    try {
      BITS = MethodHandles.lookup().findVarHandle(DefaultStream.class, "bits", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final ConnectionEngine engine;
  int id;
  StreamListener listener;
  long outboundCredit;
  long inboundCredit;
  Reassembly reassembly;

  /**
   * The stream's state flags, and above them its interaction and side, which never change. The loop
   * reads and writes them as a plain field; every write after the constructor's is a release store,
   * so another thread that reads them with an acquire load (the state queries) sees everything the
   * loop did before. The constructor's is plain: a stream made on another thread reaches the loop
   * through the hand-off's queue, which orders it. The interaction and side live here rather than
   * in fields of their own so that the object takes 48 bytes instead of 56 (two longs and five
   * four-byte fields after a 12-byte header): every request-response, stream and channel makes one
   * on each side, and under a small heap the bytes a call allocates set how often the collector
   * runs.
   */
  private int bits;

  DefaultStream(ConnectionEngine engine, int kind, boolean requester, StreamListener listener) {
    this.engine = engine;
    this.bits = kind << KIND_SHIFT | (requester ? REQUESTER : 0);
    this.listener = listener == null ? StreamListener.NOOP : listener;
  }

  /** The interaction: {@link #REQUEST_RESPONSE}, {@link #REQUEST_STREAM} and so on. */
  int kind() {
    return bits >>> KIND_SHIFT;
  }

  /** Whether this side opened the stream. */
  boolean requester() {
    return (bits & REQUESTER) != 0;
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
    return outboundDone() ? 0 : outboundCredit;
  }

  @Override
  public boolean isCancelled() {
    return ((int) BITS.getAcquire(this) & CANCELLED) != 0;
  }

  @Override
  public boolean isInboundDone() {
    return ((int) BITS.getAcquire(this) & INBOUND_DONE) != 0;
  }

  @Override
  public boolean isOutboundDone() {
    return ((int) BITS.getAcquire(this) & OUTBOUND_DONE) != 0;
  }

  /** Loop only. */
  boolean outboundDone() {
    return (bits & OUTBOUND_DONE) != 0;
  }

  /** Loop only. */
  boolean inboundDone() {
    return (bits & INBOUND_DONE) != 0;
  }

  private boolean bothDone() {
    return (bits & (OUTBOUND_DONE | INBOUND_DONE)) == (OUTBOUND_DONE | INBOUND_DONE);
  }

  /** Loop only: sets flags with a release store (see {@link #bits}). */
  void set(int flags) {
    BITS.setRelease(this, bits | flags);
  }

  /** Loop only: clears flags with a release store. */
  void clear(int flags) {
    BITS.setRelease(this, bits & ~flags);
  }

  boolean has(int flag) {
    return (bits & flag) != 0;
  }

  void markOutboundDone() {
    set(OUTBOUND_DONE);
  }

  void markInboundDone() {
    set(INBOUND_DONE);
  }

  private void markBothDone() {
    set(OUTBOUND_DONE | INBOUND_DONE);
  }

  @Override
  public boolean isReady() {
    engine.checkInEventLoop();
    if (outboundDone() || outboundCredit <= 0) {
      return false;
    }
    if (!engine.transportWritable()) {
      engine.producers.awaitWritable(this);
      return false;
    }
    if (engine.flusher.turnUsedUp()) {
      engine.producers.awaitTurn(this);
      return false;
    }
    return true;
  }

  /**
   * The next payload. {@link #send} written out, as in the encoder's variant: payloads of a stream
   * often come from below a deep chain of a reactive library's operators, and one call level less
   * lets the JIT inline the frame writing into that chain (its inlining stops 15 levels down).
   */
  @Override
  public void next(ByteBuf metadata, ByteBuf data) {
    if (!takeSendCredit(metadata, data)) {
      return;
    }
    int flags = payloadFlags(FrameHeader.FLAG_NEXT);
    try {
      engine.writer().payload(id, flags, metadata, data);
    } catch (RuntimeException e) {
      unusableBuffer(e);
      return;
    }
    afterPayload(flags);
  }

  @Override
  public void nextAndComplete(ByteBuf metadata, ByteBuf data) {
    send(metadata, data, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE);
  }

  @Override
  public <T> void next(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    if (!takeSendCredit(metadata, null)) {
      return;
    }
    int flags = payloadFlags(FrameHeader.FLAG_NEXT);
    try {
      engine.writer().payload(id, flags, metadata, value, encoder);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      unencodable(e);
      return;
    }
    afterPayload(flags);
  }

  @Override
  public <T> void nextAndComplete(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    send(metadata, value, encoder, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE);
  }

  /**
   * A requester stream handed over from another thread is not on the wire until the loop has sent
   * its request: sending or granting on it before then would write frames for stream 0.
   */
  private void checkSent() {
    if (id == 0) {
      throw new IllegalStateException("the request has not been sent yet: wait for onReady");
    }
  }

  private void send(ByteBuf metadata, ByteBuf data, int flags) {
    if (!takeSendCredit(metadata, data)) {
      return;
    }
    flags = payloadFlags(flags);
    try {
      engine.writer().payload(id, flags, metadata, data);
    } catch (RuntimeException e) {
      unusableBuffer(e);
      return;
    }
    afterPayload(flags);
  }

  /** An unreadable buffer (released by mistake): this stream fails, the connection does not. */
  private void unusableBuffer(RuntimeException e) {
    engine.logUnusableBuffer(this, e);
    failBothWays(ErrorCode.APPLICATION_ERROR, "the application sent an unusable payload buffer");
  }

  private <T> void send(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, int flags) {
    if (!takeSendCredit(metadata, null)) {
      return;
    }
    flags = payloadFlags(flags);
    try {
      engine.writer().payload(id, flags, metadata, value, encoder);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      unencodable(e);
      return;
    }
    afterPayload(flags);
  }

  /**
   * The encoder failed (a deeply nested message, a bug in it) or the metadata buffer was unusable:
   * as for an unusable buffer, the stream fails and the call does not hang.
   */
  private void unencodable(Throwable e) {
    engine.logUnusablePayload(this, e);
    failBothWays(ErrorCode.APPLICATION_ERROR, "the application sent a payload it could not encode");
  }

  /**
   * Takes one credit for a payload about to be sent; false when the payload is dropped instead (the
   * outbound half ended: a producer racing with CANCEL is not a bug), and an exception when it may
   * never be sent. Either way the buffers are released.
   */
  private boolean takeSendCredit(ByteBuf metadata, ByteBuf data) {
    engine.checkInEventLoop();
    if (!hasOutboundHalf()) {
      release(metadata, data);
      throw new IllegalStateException("this side of the stream does not send payloads");
    }
    if (outboundDone()) {
      release(metadata, data);
      return false;
    }
    if (outboundCredit <= 0) {
      release(metadata, data);
      throw new IllegalStateException("no credit: the peer has not requested more payloads");
    }
    if (id == 0) {
      release(metadata, data);
      checkSent();
    }
    if (outboundCredit != Long.MAX_VALUE) {
      outboundCredit--;
    }
    return true;
  }

  private int payloadFlags(int flags) {
    return kind() == REQUEST_RESPONSE ? flags | FrameHeader.FLAG_COMPLETE : flags;
  }

  private void afterPayload(int flags) {
    if ((flags & FrameHeader.FLAG_COMPLETE) != 0) {
      markOutboundDone();
      endIfDone();
    }
  }

  @Override
  public void complete() {
    engine.checkInEventLoop();
    if (outboundDone() || !hasOutboundHalf()) {
      return;
    }
    checkSent();
    markOutboundDone();
    engine.writer().complete(id);
    endIfDone();
  }

  @Override
  public void error(int errorCode, String message) {
    engine.checkInEventLoop();
    if (bothDone()) {
      return;
    }
    markBothDone();
    if (id != 0) {
      engine.writer().error(id, errorCode, message);
    }
    end();
  }

  @Override
  public void fail(Throwable cause) {
    error(ConnectionEngine.failureCode(cause), engine.failureMessage("the handler failed", cause));
  }

  @Override
  public void request(long n) {
    engine.checkInEventLoop();
    if (n <= 0) {
      throw new IllegalArgumentException("request-n must be positive: " + n);
    }
    if (inboundDone() || kind() == REQUEST_RESPONSE || inboundCredit == Long.MAX_VALUE) {
      return;
    }
    checkSent();
    long total = inboundCredit + n;
    inboundCredit = n >= Integer.MAX_VALUE || total < 0 ? Long.MAX_VALUE : total;
    engine.writer().requestN(id, n);
    engine.flusher.onCreditWritten();
  }

  @Override
  public void cancel() {
    engine.checkInEventLoop();
    if (inboundDone()) {
      return;
    }
    // A requester's CANCEL ends the whole stream, a channel's outbound half included (spec: "upon
    // sending a CANCEL, the stream is terminated on the Requester"; rsocket-java does the same).
    // Only a channel responder's cancel leaves its outbound half open.
    set(INBOUND_DONE | CANCELLED | (requester() ? OUTBOUND_DONE : 0));
    if (reassembly != null) {
      // A message half received will never be delivered: give its memory back now, not when the
      // outbound half ends (which, on a channel, may be never).
      engine.releaseReassembly(reassembly);
      reassembly = null;
    }
    if (id != 0) {
      engine.writer().cancel(id);
    }
    endIfDone();
  }

  boolean hasOutboundHalf() {
    return requester() ? kind() == REQUEST_CHANNEL : kind() != FIRE_AND_FORGET;
  }

  // ---- inbound events, called by the engine ----

  /**
   * A complete (reassembled) PAYLOAD. Returns false when the peer sent without credit: the caller
   * closes the connection.
   */
  boolean onPayload(int flags, ByteBuf metadata, ByteBuf data) {
    if (inboundDone()) {
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
    if (inboundDone()) {
      return;
    }
    boolean completes = (flags & FrameHeader.FLAG_COMPLETE) != 0 || kind() == REQUEST_RESPONSE;
    if (completes) {
      markInboundDone();
    }
    try {
      listener.onNext(this, metadata, data);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
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
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      engine.listenerFailed(this, e);
    }
  }

  void onRequestN(int n) {
    if (outboundDone()) {
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
      } catch (Throwable e) {
        Failures.throwIfFatal(e);
        engine.listenerFailed(this, e);
      }
    }
  }

  void onCancel() {
    if (outboundDone()) {
      return;
    }
    // The requester cancelled: the stream is over on this side too, a channel's inbound half
    // included. A channel requester that sees CANCEL only stops sending.
    set(OUTBOUND_DONE | CANCELLED | (requester() ? 0 : INBOUND_DONE));
    endIfDone();
    try {
      listener.onCancel(this);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      engine.listenerFailed(this, e);
    }
  }

  /** Ends the stream with an error from the peer or a local failure; notifies the listener. */
  void onError(int errorCode, String message) {
    if (bothDone()) {
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
    if (bothDone()) {
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
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      engine.logListenerFailure(this, e);
    }
  }

  private void endIfDone() {
    if (bothDone()) {
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
    try {
      if (metadata != null) {
        metadata.release();
      }
    } finally {
      if (data != null) {
        data.release(); // even when the metadata was a lent buffer, which refuses release()
      }
    }
  }

  @Override
  public String toString() {
    return "Stream[" + id + (requester() ? " requester" : " responder") + " kind=" + kind() + "]";
  }
}
