package io.millrace.core.internal;

import io.millrace.core.CloseReason;
import io.millrace.core.ConnectionSetup;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameListener;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.lang.System.Logger.Level;

/**
 * What each frame from the peer does to a connection: the receiving half of {@link
 * ConnectionEngine}, called by {@link io.millrace.frame.FrameReader} on the event loop.
 *
 * <p>Requests are checked in this order: the id's parity (one of this side's is a connection
 * error), an id in use (ignored, as the spec says), the connection's state (a closing connection
 * answers REJECTED, but still takes fire-and-forget: nothing the peer sent before it learned of the
 * close is lost), the peer's concurrency limit and its lease (REJECTED). Fragmented messages are
 * reassembled within the per-message limit and the connection's and server's reassembly budgets;
 * breaking one is a connection error.
 */
final class InboundDispatcher implements FrameListener {
  private static final System.Logger LOG = System.getLogger(InboundDispatcher.class.getName());

  private final ConnectionEngine engine;
  private final StreamRegistry streams;
  private final FrameWriter writer;
  private final TokenBucket keepAliveBucket;
  private final TokenBucket metadataPushBucket;

  InboundDispatcher(ConnectionEngine engine) {
    this.engine = engine;
    this.streams = engine.streams;
    this.writer = engine.writer;
    long now = engine.timers.nanoTime();
    this.keepAliveBucket = new TokenBucket(engine.config.maxInboundKeepAlivesPerSecond(), now);
    this.metadataPushBucket =
        new TokenBucket(engine.config.maxInboundMetadataPushesPerSecond(), now);
  }

  // ---------------------------------------------------------------- setup

  @Override
  public void onSetup(
      int flags,
      int majorVersion,
      int minorVersion,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      ByteBuf resumeToken,
      String metadataMimeType,
      String dataMimeType,
      ByteBuf metadata,
      ByteBuf data) {
    if (engine.client || engine.state() != ConnectionEngine.AWAITING_SETUP) {
      return; // a client ignores SETUP, a server a second one (spec: handling the unexpected)
    }
    if (majorVersion != 1) {
      rejectSetup(ErrorCode.UNSUPPORTED_SETUP, "unsupported protocol version " + majorVersion);
      return;
    }
    if ((flags & FrameHeader.FLAG_RESUME) != 0 && !enableResumption(resumeToken)) {
      return;
    }
    if (keepAliveIntervalMillis <= 0 || maxLifetimeMillis <= 0) {
      rejectSetup(ErrorCode.INVALID_SETUP, "keepalive interval and max lifetime must be positive");
      return;
    }
    long silenceAllowed = Math.min(maxLifetimeMillis, engine.config.maxLifetime().toMillis());
    if (keepAliveIntervalMillis >= silenceAllowed) {
      // The connection would be closed as silent between two of the client's KEEPALIVEs.
      rejectSetup(
          ErrorCode.UNSUPPORTED_SETUP,
          "keepalive interval "
              + keepAliveIntervalMillis
              + " ms is not below the max lifetime of "
              + silenceAllowed
              + " ms that this server allows");
      return;
    }
    boolean lease = (flags & FrameHeader.FLAG_LEASE) != 0;
    if (lease && engine.config.leaseIssuer() == null) {
      rejectSetup(ErrorCode.UNSUPPORTED_SETUP, "leases are not supported by this server");
      return;
    }
    engine.accept(
        new ConnectionSetup(
            metadataMimeType,
            dataMimeType,
            keepAliveIntervalMillis,
            maxLifetimeMillis,
            lease,
            metadata,
            data),
        lease);
  }

  /** SETUP asked for resumption: the session keeps its token, or the SETUP is refused. */
  private boolean enableResumption(ByteBuf token) {
    ResumableSession session = engine.session;
    if (session == null) {
      // The spec says REJECTED_SETUP; rsocket-java answers UNSUPPORTED_SETUP, which says more.
      rejectSetup(ErrorCode.UNSUPPORTED_SETUP, "resumption is not supported");
      return false;
    }
    if (token == null || !token.isReadable()) {
      rejectSetup(ErrorCode.INVALID_SETUP, "a resumable SETUP needs a resume token");
      return false;
    }
    byte[] bytes = io.netty.buffer.ByteBufUtil.getBytes(token);
    if (!session.enable(bytes)) {
      rejectSetup(ErrorCode.REJECTED_SETUP, "the resume token is in use or was used before");
      return false;
    }
    return true;
  }

  private void rejectSetup(int code, String message) {
    engine.terminate(CloseReason.Kind.ERROR_SENT, code, message, true);
  }

  // ---------------------------------------------------------------- requests

  @Override
  public void onRequest(
      int type, int streamId, int flags, int initialRequestN, ByteBuf metadata, ByteBuf data) {
    if (!streams.isPeerId(streamId)) {
      engine.protocolViolation("request on stream " + streamId + " of this side's parity");
      return;
    }
    if (streams.contains(streamId)) {
      return; // a request on an id in use is ignored (spec)
    }
    int state = engine.state();
    boolean fragmented = (flags & FrameHeader.FLAG_FOLLOWS) != 0;
    boolean takes =
        state == ConnectionEngine.OPEN
            || state == ConnectionEngine.DRAINING && type == FrameType.REQUEST_FNF;
    if (type == FrameType.REQUEST_FNF && !fragmented) {
      if (takes && engine.leases.takeResponder()) {
        fireAndForget(metadata, data);
      }
      return;
    }
    if (!takes) {
      if (type != FrameType.REQUEST_FNF) {
        writer.error(streamId, ErrorCode.REJECTED, "the connection is closing");
      }
      return;
    }
    int max = engine.config.maxConcurrentStreams();
    boolean fnf = type == FrameType.REQUEST_FNF; // has no answer: refused silently, as unfragmented
    if (streams.peerStreams() >= max) {
      if (!fnf) {
        writer.error(
            streamId, ErrorCode.REJECTED, "too many concurrent streams (limit " + max + ")");
      }
      return;
    }
    if (!engine.leases.takeResponder()) {
      if (!fnf) {
        writer.error(streamId, ErrorCode.REJECTED, "request exceeds the lease");
      }
      return;
    }
    DefaultStream stream = new DefaultStream(engine, kindOf(type), false, null);
    stream.id = streamId;
    streams.add(stream);
    if (fragmented) {
      stream.reassembly =
          new Reassembly(
              engine.alloc(), type, flags, initialRequestN, engine.config.maxReassembledLength());
      addFragment(stream.reassembly, metadata, data);
      return;
    }
    dispatchRequest(stream, type, flags, initialRequestN, metadata, data);
  }

  private void fireAndForget(ByteBuf metadata, ByteBuf data) {
    try {
      engine.responder.fireAndForget(engine, metadata, data);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "fire-and-forget handler threw", e);
    }
  }

  private static int kindOf(int type) {
    switch (type) {
      case FrameType.REQUEST_RESPONSE:
        return DefaultStream.REQUEST_RESPONSE;
      case FrameType.REQUEST_STREAM:
        return DefaultStream.REQUEST_STREAM;
      case FrameType.REQUEST_CHANNEL:
        return DefaultStream.REQUEST_CHANNEL;
      default:
        return DefaultStream.FIRE_AND_FORGET;
    }
  }

  private void dispatchRequest(
      DefaultStream stream,
      int type,
      int flags,
      int initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    StreamListener listener;
    try {
      switch (type) {
        case FrameType.REQUEST_RESPONSE:
          stream.outboundCredit = 1;
          stream.markInboundDone();
          listener = engine.responder.requestResponse(stream, metadata, data);
          break;
        case FrameType.REQUEST_STREAM:
          stream.addOutboundCredit(initialRequestN);
          stream.markInboundDone();
          listener = engine.responder.requestStream(stream, metadata, data);
          break;
        case FrameType.REQUEST_CHANNEL:
          stream.addOutboundCredit(initialRequestN);
          boolean complete = (flags & FrameHeader.FLAG_COMPLETE) != 0;
          if (complete) {
            stream.markInboundDone();
          }
          listener = engine.responder.requestChannel(stream, metadata, data, complete);
          break;
        default:
          // A reassembled fire-and-forget.
          stream.markOutboundDone();
          stream.markInboundDone();
          engine.remove(stream);
          fireAndForget(metadata, data);
          return;
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "responder threw", e);
      stream.fail(e);
      return;
    }
    if (listener != null) {
      stream.listener = listener;
      stream.notifyReady();
    }
  }

  // ---------------------------------------------------------------- stream frames

  @Override
  public void onRequestN(int streamId, int n) {
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.onRequestN(n);
    }
  }

  @Override
  public void onCancel(int streamId) {
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.onCancel();
    }
  }

  @Override
  public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
    DefaultStream stream = streams.get(streamId);
    if (stream == null) {
      return; // late frame for a finished stream: ignored (spec)
    }
    Reassembly reassembly = stream.reassembly;
    // F together with C: F is ignored (spec), the payload is complete.
    boolean follows =
        (flags & FrameHeader.FLAG_FOLLOWS) != 0 && (flags & FrameHeader.FLAG_COMPLETE) == 0;
    if (reassembly == null) {
      if (!follows) {
        if (!stream.onPayload(flags, metadata, data)) {
          engine.protocolViolation("payload beyond the credit granted on stream " + streamId);
        }
        return;
      }
      if (stream.inboundDone()) {
        return; // nothing is expected on this half: not buffered
      }
      if ((flags & FrameHeader.FLAG_NEXT) == 0) {
        engine.protocolViolation("first fragment without NEXT on stream " + streamId);
        return;
      }
      if (!stream.takeInboundCredit()) {
        engine.protocolViolation("payload beyond the credit granted on stream " + streamId);
        return;
      }
      stream.reassembly =
          new Reassembly(
              engine.alloc(), FrameType.PAYLOAD, flags, 0, engine.config.maxReassembledLength());
      addFragment(stream.reassembly, metadata, data);
      return;
    }
    if (stream.inboundDone()) {
      return; // the half was cancelled meanwhile: the fragments are dropped, never buffered
    }
    if (!addFragment(reassembly, metadata, data) || follows) {
      return;
    }
    stream.reassembly = null;
    try {
      if (reassembly.frameType == FrameType.PAYLOAD) {
        stream.deliverNext(
            FrameHeader.FLAG_NEXT | flags & FrameHeader.FLAG_COMPLETE,
            reassembly.metadata(),
            reassembly.data());
      } else {
        int requestFlags = reassembly.firstFlags | flags & FrameHeader.FLAG_COMPLETE;
        dispatchRequest(
            stream,
            reassembly.frameType,
            requestFlags,
            reassembly.initialRequestN,
            reassembly.metadata(),
            reassembly.data());
      }
    } finally {
      engine.releaseReassembly(reassembly);
    }
  }

  /**
   * Adds a fragment, charging its memory to the connection's and server's budgets; on a breach
   * closes the connection with CONNECTION_ERROR and returns false.
   */
  private boolean addFragment(Reassembly reassembly, ByteBuf metadata, ByteBuf data) {
    long before = reassembly.held();
    int status = reassembly.add(metadata, data);
    if (status == Reassembly.METADATA_AFTER_DATA) {
      engine.protocolViolation("fragment with metadata after data");
      return false;
    }
    if (status == Reassembly.TOO_LONG) {
      engine.protocolViolation(
          "fragmented message exceeds the limit of "
              + engine.config.maxReassembledLength()
              + " bytes");
      return false;
    }
    String breach = engine.reassemblyBudget.charge(reassembly.held() - before);
    if (breach != null) {
      // Only what was charged before this fragment is on the budgets; the stream releases that.
      reassembly.forgetGrowthSince(before);
      engine.protocolViolation(breach);
      return false;
    }
    return true;
  }

  @Override
  public void onError(int streamId, int code, String message) {
    if (streamId == 0) {
      if (code >= ErrorCode.INVALID_SETUP
          && code <= ErrorCode.REJECTED_RESUME
          && engine.establishedWithPeer()) {
        // Setup errors mean nothing to a server, nor to a client that has heard from the server
        // (spec: handling the unexpected).
        return;
      }
      if (code == ErrorCode.CONNECTION_CLOSE) {
        engine.peerAskedToClose(message);
        return;
      }
      engine.errorFromPeer(code, message);
      return;
    }
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.onError(code, message);
    }
  }

  // ---------------------------------------------------------------- connection frames

  /**
   * Answers a KEEPALIVE that asks for it. Only those count against the rate limit: they are what
   * makes this side write, and replies to this side's own KEEPALIVEs come at the rate this side
   * chose (counting them closed a healthy client that pinged rsocket-java every 50 ms).
   */
  @Override
  public void onKeepAlive(boolean respond, long lastReceivedPosition, ByteBuf data) {
    if (!respond) {
      if (engine.state() == ConnectionEngine.DRAINING) {
        engine.keepAliveAnswered(data);
      }
      return;
    }
    if (!keepAliveBucket.tryAcquire(engine.timers.nanoTime())) {
      engine.protocolViolation(
          "more than "
              + engine.config.maxInboundKeepAlivesPerSecond()
              + " KEEPALIVE frames asking for a reply a second");
      return;
    }
    writer.keepAlive(false, data);
  }

  @Override
  public void onMetadataPush(ByteBuf metadata) {
    if (!metadataPushBucket.tryAcquire(engine.timers.nanoTime())) {
      engine.protocolViolation(
          "more than "
              + engine.config.maxInboundMetadataPushesPerSecond()
              + " METADATA_PUSH frames a second");
      return;
    }
    int state = engine.state();
    if (state != ConnectionEngine.OPEN && state != ConnectionEngine.DRAINING) {
      return;
    }
    try {
      engine.responder.metadataPush(engine, metadata);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "metadata-push handler threw", e);
    }
  }

  @Override
  public void onLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    if (engine.leases.enabled()) {
      engine.leaseReceived(ttlMillis, numberOfRequests);
    }
  }

  @Override
  public void onResume(
      int majorVersion,
      int minorVersion,
      ByteBuf token,
      long lastReceivedServerPosition,
      long firstAvailableClientPosition) {
    if (!engine.client) {
      // RESUME as the first frame was answered before; after SETUP it is a connection error
      // (spec: "SHOULD send an ERROR[CONNECTION_ERROR]"). A client ignores it.
      engine.protocolViolation("RESUME after SETUP");
    }
  }

  @Override
  public void onResumeOk(long lastReceivedClientPosition) {
    // No RESUME was sent: not accounted for, so ignored (spec: handling the unexpected).
  }

  @Override
  public void onExt(int streamId, int flags, int extendedType, ByteBuf metadata, ByteBuf data) {
    if ((flags & FrameHeader.FLAG_IGNORE) == 0) {
      unsupportedFrame(streamId, "extension frame type 0x" + Integer.toHexString(extendedType));
    }
    // No extension is understood yet: ignorable ones are skipped.
  }

  @Override
  public void onUnknownFrame(int streamId, int frameType, int flags) {
    unsupportedFrame(streamId, "frame type " + FrameType.name(frameType));
  }

  /**
   * A frame the peer says must not be ignored but this side does not understand. The spec leaves
   * the answer open; Millrace fails as little as it can: the stream concerned with ERROR[INVALID],
   * a frame for no live stream is dropped (as for any unknown stream), and only one on stream 0
   * ends the connection with CONNECTION_ERROR.
   */
  private void unsupportedFrame(int streamId, String what) {
    if (streamId == 0) {
      engine.protocolViolation("unsupported " + what + " without the ignore flag");
      return;
    }
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.failBothWays(ErrorCode.INVALID, "unsupported " + what);
    }
  }
}
