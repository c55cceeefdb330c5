package io.millrace.core.internal;

import io.millrace.core.CloseReason;
import io.millrace.core.Resumption;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.ErrorFrame;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.KeepAliveFrame;
import io.millrace.frame.ResumeFrame;
import io.millrace.frame.ResumeOkFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A resumable RSocket session: the {@link Transport} its {@link ConnectionEngine} writes to,
 * carried on one real transport after another. The engine, its streams, credit, reassemblies and
 * timers never see a connection break; this class counts positions, keeps what the peer has not
 * confirmed in a {@link ReplayStore}, and runs the RESUME handshake on each new connection.
 *
 * <p>Phases: {@code ATTACHED} (frames flow), {@code DETACHED} (the connection broke: the engine's
 * writes go to the store only, and it is not writable), {@code RESUMING} (client: RESUME sent on a
 * new connection, nothing else may be sent until RESUME_OK), {@code ENDED} (the engine closed the
 * session or it could not be resumed). A server connection on a server with resumption starts as a
 * session that is not resumable until its SETUP asks for it: until then this class only forwards.
 *
 * <p>Positions (RSocket 1.0): the bytes of every frame with a stream id other than 0, without the
 * length prefix, counted from the start of the session; this is what rsocket-java and rsocket-js
 * count too. Every KEEPALIVE this side sends carries the position received so far, and the peer's
 * KEEPALIVEs release what they confirm from the store.
 *
 * <p>Bounds. The store holds every unconfirmed frame: when it holds {@link
 * Resumption#maxStoreBytes()} (or the server-wide {@link ResumeBudget} is used up) the session
 * reports itself not writable, so producers wait, and what goes beyond the bound counts as queued
 * for the peer, so that the engine pauses reading from a peer that keeps sending requests without
 * confirming the answers. To drain the store at full speed, this side confirms what it received
 * every 256 KiB (a KEEPALIVE without R, which peers take as a position update; a smaller interval
 * keeps the sender's retained batches few and hot in cache: every 4 MiB cost request-stream about a
 * third of its rate) and asks for a confirmation (KEEPALIVE with R) when half of its own store is
 * used.
 *
 * <p>Event loop only (the engine's loop: new connections are brought to it by the transport).
 */
public final class ResumableSession implements Transport {
  private static final System.Logger LOG = System.getLogger(ResumableSession.class.getName());

  static final int ATTACHED = 0;
  static final int DETACHED = 1;
  static final int RESUMING = 2;
  static final int ENDED = 3;

  /** What brings a client session a new connection. */
  public interface Reconnector {
    /**
     * Opens a new connection for {@code session} on its executor and hands it over with {@link
     * ResumableSession#attachNew}, or reports failure with {@link
     * ResumableSession#reconnectFailed}. Called on the session's executor.
     */
    void reconnect(ResumableSession session);
  }

  final boolean client;
  private final EventExecutor executor;
  private final ByteBufAllocator alloc;
  private final int headroom;
  private final boolean coalesces;
  private final Resumption settings;
  private final Backoff backoff;
  private final ResumeSessions registry;
  private final ReplayStore store;
  private final ResumeBudget budget;
  private final long storeBound;
  private final long ackEvery;
  private Reconnector reconnector;
  private ConnectionEngine engine;

  /** Volatile, with {@link #phase}: application threads read writability through CallQueue. */
  private volatile Transport current;

  private Link link;
  private volatile int phase = ATTACHED;
  private boolean resumable;
  private byte[] token;
  private boolean firstFrameSeen;
  private boolean reading = true;
  private boolean ending;
  private boolean full;
  private boolean probing;
  private long receivedPosition;
  private long lastAckSent;
  private long lastProbeNanos = Long.MIN_VALUE / 2;

  /** Least time between two KEEPALIVEs asking for the peer's position. */
  static final long PROBE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  // Replaced on each resume, read by handlers on other threads.
  private volatile SocketAddress remoteAddress;
  private volatile SocketAddress localAddress;
  private volatile javax.net.ssl.SSLSession tlsSession;
  private Throwable lastError;
  private String lostBecause;
  private long detachedAtNanos;
  private int attempts;
  private final Later later = new Later();

  /** The session's one timer: session expiry, the next reconnect, or the RESUME_OK deadline. */
  private final class Later extends Timeout {
    Runnable action;

    @Override
    void expire(long nowNanos) {
      Runnable a = action;
      action = null;
      if (a != null) {
        a.run();
      }
    }
  }

  private void schedule(Runnable action, long delayNanos) {
    Timers timers = engine.timers;
    timers.cancel(later);
    later.action = action;
    timers.schedule(later, timers.nanoTime() + delayNanos);
  }

  private ResumableSession(
      Transport first,
      boolean client,
      Resumption settings,
      ResumeSessions registry,
      ResumeBudget budget) {
    this.client = client;
    this.executor = first.executor();
    this.alloc = first.alloc();
    this.headroom = first.headroom();
    this.coalesces = first.coalescesFrames();
    this.settings = settings;
    this.backoff = new Backoff(settings.minBackoff(), settings.maxBackoff(), settings.jitter());
    this.registry = registry;
    this.budget = budget;
    this.store = new ReplayStore(budget);
    this.storeBound = settings.maxStoreBytes();
    this.ackEvery = Math.min(256 * 1024, storeBound / 4);
    this.remoteAddress = first.remoteAddress();
    this.localAddress = first.localAddress();
    this.tlsSession = first.tlsSession();
    attach(first);
  }

  /**
   * A client session on {@code first}, its first connection; {@code token} is the resume token its
   * SETUP carries (ownership stays with the caller). The caller creates the engine on the session
   * and starts it.
   */
  public static ResumableSession client(
      Transport first, Resumption settings, byte[] token, Reconnector reconnector) {
    ResumableSession s = new ResumableSession(first, true, settings, null, null);
    s.resumable = true;
    s.token = token.clone();
    s.reconnector = reconnector;
    return s;
  }

  /**
   * A server connection on a server that offers resumption: it becomes resumable if its SETUP asks,
   * and a RESUME as its first frame hands its transport to the session it names.
   */
  public static ResumableSession server(Transport first, ResumeSessions registry) {
    return new ResumableSession(first, false, registry.settings(), registry, registry.budget());
  }

  /** Called once by the engine created on this session. */
  void bind(ConnectionEngine engine) {
    this.engine = engine;
    engine.session = this;
  }

  ConnectionEngine engine() {
    return engine;
  }

  /** Server: this connection resumed another session, which takes its transport over. */
  void handOver() {
    link = null;
    current = null;
    ending = true;
    phase = ENDED;
    engine.handedOver();
  }

  byte[] token() {
    return token;
  }

  boolean isResumable() {
    return resumable;
  }

  int phase() {
    return phase;
  }

  ReplayStore store() {
    return store;
  }

  // ------------------------------------------------------------------ Transport (engine-facing)

  @Override
  public void setListener(TransportListener listener) {
    throw new UnsupportedOperationException("a session always reports to its own engine");
  }

  @Override
  public long receivedPosition() {
    return receivedPosition;
  }

  @Override
  public EventExecutor executor() {
    return executor;
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  @Override
  public int headroom() {
    return headroom;
  }

  @Override
  public boolean coalescesFrames() {
    return coalesces;
  }

  @Override
  public void write(ByteBuf frame) {
    if (!resumable) {
      current.write(frame); // passthrough until SETUP asked for resumption
      return;
    }
    boolean resumableFrame = frame.getInt(frame.readerIndex() + headroom) != 0;
    if (resumableFrame) {
      store.addSingle(frame.retainedDuplicate(), headroom);
      checkFull();
    }
    if (phase == ATTACHED) {
      current.write(frame);
    } else {
      frame.release(); // kept in the store if resumable; a connection frame has no use later
    }
  }

  @Override
  public void writeFrames(ByteBuf frames, int frameCount) {
    if (!resumable) {
      current.writeFrames(frames, frameCount);
      return;
    }
    store.addBatch(frames.retainedDuplicate(), frameCount); // batches hold stream frames only
    checkFull();
    if (phase == ATTACHED) {
      current.writeFrames(frames, frameCount);
    } else {
      frames.release();
    }
  }

  @Override
  public void flush() {
    if (phase != ATTACHED) {
      return;
    }
    if (resumable && !probing && store.bytes() > storeBound / 2) {
      long now = engine.timers.nanoTime();
      // At most 10 a second: peers limit the KEEPALIVEs they answer (Millrace: 20 a second).
      if (now - lastProbeNanos >= PROBE_INTERVAL_NANOS) {
        lastProbeNanos = now;
        probing = true; // the answer carries the peer's position and releases what it confirms
        current.write(KeepAliveFrame.encode(alloc, headroom, true, receivedPosition, null));
      }
    }
    current.flush();
  }

  @Override
  public boolean isWritable() {
    Transport t = current;
    return phase == ATTACHED && t != null && t.isWritable() && !full;
  }

  @Override
  public long queuedBytes() {
    Transport t = current;
    long queued = phase == ATTACHED && t != null ? t.queuedBytes() : 0;
    return resumable ? queued + Math.max(0, store.bytes() - storeBound) : queued;
  }

  @Override
  public void setReading(boolean reading) {
    this.reading = reading;
    if (phase == ATTACHED) {
      current.setReading(reading);
    }
  }

  /** The engine closes the session: it ends, and so does the connection it is on, if any. */
  @Override
  public void close() {
    if (end() && current != null) {
      current.close();
    }
  }

  @Override
  public void closeGracefully(long timeoutMillis) {
    if (end() && current != null) {
      current.closeGracefully(timeoutMillis);
    }
  }

  /**
   * Ends the session for the engine's close: frees the store, forgets the token. Returns whether a
   * connection is there to close (its close then reaches the engine); without one the engine hears
   * of the close from a task of its own.
   */
  private boolean end() {
    if (ending) {
      return false;
    }
    ending = true;
    cancelPending();
    store.clear();
    if (registry != null && token != null) {
      registry.remove(token, this);
    }
    phase = ENDED;
    if (current != null) {
      return true; // its close reaches the engine through the link, which forwards once ending
    }
    link = null;
    executor.execute(engine::onTransportClosed);
    return false;
  }

  @Override
  public SocketAddress remoteAddress() {
    return remoteAddress;
  }

  @Override
  public SocketAddress localAddress() {
    return localAddress;
  }

  /** The TLS session of the connection the session runs on now (or ran on last). */
  @Override
  public javax.net.ssl.SSLSession tlsSession() {
    return tlsSession;
  }

  // ------------------------------------------------------------------ store bounds

  private void checkFull() {
    if (!full && (store.bytes() >= storeBound || budget != null && budget.exhausted())) {
      full = true;
      if (budget != null && budget.exhausted()) {
        registry.overBudget();
        if (phase == ATTACHED) {
          schedule(this::recheckBudget, BUDGET_RECHECK_NANOS);
        }
      }
    }
  }

  /** Held back by the server-wide budget: look again until it has room (sessions elsewhere). */
  private void recheckBudget() {
    if (!full || ending || phase != ATTACHED) {
      return;
    }
    if (store.bytes() < storeBound && !budget.exhausted()) {
      full = false;
      engine.onWritabilityChanged();
    } else if (budget.exhausted()) {
      registry.overBudget();
      schedule(this::recheckBudget, BUDGET_RECHECK_NANOS);
    }
  }

  static final long BUDGET_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** The peer confirmed {@code position}: release what it covers; wake senders if room came. */
  private void confirmed(long position) {
    if (position > store.end()) {
      engine.protocolViolation(
          "KEEPALIVE confirms position " + position + " beyond the " + store.end() + " sent");
      return;
    }
    if (position > store.firstAvailable()) {
      store.release(position);
    }
    probing = false;
    if (full && store.bytes() < storeBound && (budget == null || !budget.exhausted())) {
      full = false;
      engine.onWritabilityChanged();
    }
  }

  // ------------------------------------------------------------------ inbound

  /** The listener of one real transport; events from a transport no longer current are dropped. */
  private final class Link implements TransportListener {
    final Transport transport;

    Link(Transport transport) {
      this.transport = transport;
    }

    private boolean stale() {
      return link != this;
    }

    @Override
    public void onFrame(ByteBuf frame) {
      if (!stale()) {
        frameIn(frame);
      }
    }

    @Override
    public void onReadComplete() {
      if (stale()) {
        return;
      }
      if (resumable && phase == ATTACHED && receivedPosition - lastAckSent >= ackEvery) {
        lastAckSent = receivedPosition;
        current.write(KeepAliveFrame.encode(alloc, headroom, false, receivedPosition, null));
        current.flush(); // the engine may have nothing to flush after this read
      }
      if (phase == ATTACHED || phase == ENDED) {
        engine.onReadComplete();
      }
    }

    @Override
    public void onWritabilityChanged() {
      if (!stale() && phase != DETACHED && phase != RESUMING) {
        engine.onWritabilityChanged();
      }
    }

    @Override
    public void onFrameTooLong(long length) {
      if (!stale()) {
        engine.onFrameTooLong(length);
      }
    }

    @Override
    public void onInputClosed() {
      if (stale()) {
        return;
      }
      if (!resumable || ending || engine.state() == ConnectionEngine.DRAINING) {
        engine.onInputClosed();
      } else {
        connectionLost("the peer closed the connection");
      }
    }

    @Override
    public void onTransportError(Throwable cause) {
      if (stale()) {
        return;
      }
      lastError = cause;
      if (!resumable || ending) {
        engine.onTransportError(cause);
      }
    }

    @Override
    public void onTransportClosed() {
      if (stale()) {
        return;
      }
      if (!resumable || ending) {
        link = null;
        current = null;
        engine.onTransportClosed();
      } else {
        connectionLost(
            lastError != null
                ? "I/O error: " + lastError.getMessage()
                : "the connection was closed");
      }
    }
  }

  private void frameIn(ByteBuf frame) {
    if (!resumable) {
      if (!firstFrameSeen) {
        firstFrameSeen = true;
        if (registry != null
            && frame.readableBytes() >= FrameHeader.SIZE
            && FrameHeader.type(frame) == FrameType.RESUME) {
          registry.resumeRequested(this, current, frame);
          return;
        }
      }
      engine.onFrame(frame);
      return;
    }
    if (phase == RESUMING) {
      resumeAnswer(frame);
      return;
    }
    if (frame.readableBytes() >= FrameHeader.SIZE) {
      if (frame.getInt(frame.readerIndex()) != 0) {
        receivedPosition += frame.readableBytes();
      } else {
        int type = FrameHeader.type(frame);
        if (type == FrameType.KEEPALIVE && frame.readableBytes() >= FrameHeader.SIZE + 8) {
          confirmed(KeepAliveFrame.lastReceivedPosition(frame));
          if (phase == ENDED) {
            return;
          }
        } else if (type == FrameType.RESUME || type == FrameType.RESUME_OK) {
          engine.protocolViolation(FrameType.name(type) + " on an established session");
          return;
        }
      }
    }
    engine.onFrame(frame);
  }

  /** Server: SETUP asked for resumption with {@code token}; false if the token is taken. */
  boolean enable(byte[] token) {
    if (!registry.register(token, this)) {
      return false;
    }
    this.token = token;
    this.resumable = true;
    return true;
  }

  // ------------------------------------------------------------------ losing a connection

  /**
   * The connection is gone (closed, reset, or silent past the max lifetime): the session detaches
   * and waits for a new one. Its close is not reported to the engine.
   */
  void connectionLost(String why) {
    if (phase != ATTACHED && phase != RESUMING || ending) {
      return;
    }
    Transport lost = current;
    boolean wasAttached = phase == ATTACHED;
    link = null;
    current = null;
    phase = DETACHED;
    lostBecause = why;
    lastError = null;
    probing = false;
    if (wasAttached) {
      // The session timeout counts from the last time a connection was up: attempts that connect
      // and then fail do not restart it.
      detachedAtNanos = engine.timers.nanoTime();
    }
    lost.close();
    if (wasAttached) {
      LOG.log(Level.DEBUG, "session with {0} lost its connection: {1}", remoteAddress, why);
      engine.sessionDetached(why);
      if (ending) {
        return; // a listener closed the connection
      }
    }
    if (client) {
      scheduleReconnect();
    } else {
      registry.detached(this);
      long ttl = settings.sessionTimeout().toNanos();
      schedule(this::expire, ttl);
    }
  }

  /** Server: no client came back in time (or the server needs the memory): the session ends. */
  void expire(String why) {
    if (phase != DETACHED || ending) {
      return;
    }
    engine.sessionEnded(CloseReason.Kind.SESSION_EXPIRED, ErrorCode.CONNECTION_ERROR, why);
  }

  private void expire() {
    expire("no connection resumed the session within " + settings.sessionTimeout());
  }

  long detachedAtNanos() {
    return detachedAtNanos;
  }

  private void cancelPending() {
    later.action = null;
    if (engine != null) {
      engine.timers.cancel(later);
    }
  }

  // ------------------------------------------------------------------ client: reconnecting

  private void scheduleReconnect() {
    long elapsed = engine.timers.nanoTime() - detachedAtNanos;
    long left = settings.sessionTimeout().toNanos() - elapsed;
    if (left <= 0) {
      engine.sessionEnded(
          CloseReason.Kind.SESSION_EXPIRED,
          ErrorCode.CONNECTION_ERROR,
          "could not resume within " + settings.sessionTimeout() + " (" + lostBecause + ")");
      return;
    }
    long delay = Math.min(backoff.delayNanos(attempts), left);
    attempts++;
    engine.reconnecting(attempts, TimeUnit.NANOSECONDS.toMillis(delay));
    Runnable attempt =
        () -> {
          if (phase == DETACHED && !ending) {
            reconnector.reconnect(this);
          }
        };
    if (delay == 0) {
      // The first attempt goes at once: the timer wheel's 50 ms ticks would delay it by a tick.
      cancelPending();
      executor.execute(attempt);
    } else {
      schedule(attempt, delay);
    }
  }

  /** Client: no new connection will come (the client shuts down): the session ends. */
  public void giveUp(String why) {
    if (!ending) {
      engine.sessionEnded(CloseReason.Kind.SESSION_EXPIRED, ErrorCode.CONNECTION_ERROR, why);
    }
  }

  /** Client: a reconnect attempt failed to connect; the next one is scheduled. */
  public void reconnectFailed(Throwable cause) {
    if (phase != DETACHED || ending) {
      return;
    }
    lostBecause = String.valueOf(cause.getMessage());
    scheduleReconnect();
  }

  /**
   * Client: {@code transport} is a new connection for this session, on its executor: RESUME goes
   * out and nothing else until RESUME_OK.
   */
  public void attachNew(Transport transport) {
    if (phase != DETACHED || ending) {
      transport.close();
      return;
    }
    if (transport.headroom() != headroom || transport.coalescesFrames() != coalesces) {
      transport.close();
      reconnectFailed(
          new IllegalStateException("a resumed connection must use the same transport"));
      return;
    }
    phase = RESUMING;
    current = transport;
    link = new Link(transport);
    transport.setListener(link);
    remoteAddress = transport.remoteAddress();
    localAddress = transport.localAddress();
    tlsSession = transport.tlsSession();
    transport.write(
        ResumeFrame.encode(
            alloc,
            headroom,
            Unpooled.wrappedBuffer(token),
            receivedPosition,
            store.firstAvailable()));
    transport.flush();
    Link attempt = link;
    schedule(
        () -> {
          if (link == attempt && phase == RESUMING) {
            connectionLost("no answer to RESUME within " + engine.config.setupTimeout());
          }
        },
        engine.config.setupTimeout().toNanos());
  }

  /** Client, awaiting RESUME_OK: the server's answer. */
  private void resumeAnswer(ByteBuf frame) {
    int type = frame.readableBytes() >= FrameHeader.SIZE ? FrameHeader.type(frame) : -1;
    if (type == FrameType.RESUME_OK && frame.readableBytes() >= FrameHeader.SIZE + 8) {
      long position = ResumeOkFrame.lastReceivedClientPosition(frame);
      cancelPending();
      if (position < store.firstAvailable() || position > store.end()) {
        failResume(
            ErrorCode.CONNECTION_ERROR,
            "the server resumed at position "
                + position
                + ", outside the "
                + store.firstAvailable()
                + ".."
                + store.end()
                + " this side holds",
            true);
        return;
      }
      resumed(position);
      return;
    }
    if (type == FrameType.ERROR && frame.readableBytes() >= FrameHeader.SIZE + 4) {
      cancelPending();
      int code = ErrorFrame.errorCode(frame);
      String message = ErrorFrame.message(frame);
      if (code == ErrorCode.REJECTED_RESUME) {
        engine.resumeRejected(message);
      } else {
        // Anything else (a server at its connection limit answers REJECTED_SETUP) may pass: the
        // session tries again until its timeout.
        connectionLost(
            "the server answered RESUME with error 0x"
                + Integer.toHexString(code)
                + ": "
                + message);
      }
      return;
    }
    failResume(
        ErrorCode.CONNECTION_ERROR,
        "expected RESUME_OK or ERROR, got "
            + (type < 0 ? "a malformed frame" : FrameType.name(type)),
        true);
  }

  private void failResume(int code, String message, boolean tellPeer) {
    if (tellPeer && current != null) {
      current.write(ErrorFrame.encode(alloc, headroom, 0, code, message));
      current.flush();
    }
    engine.sessionEnded(CloseReason.Kind.RESUME_FAILED, code, message);
  }

  // ------------------------------------------------------------------ server: resuming

  /**
   * Server, on this session's executor: a RESUME for it arrived on {@code transport} (already on
   * this executor and taken from the connection it arrived on). Answers RESUME_OK and replays, or
   * REJECTED_RESUME.
   */
  void resumeOn(
      Transport transport, long lastReceivedServerPosition, long firstAvailableClientPosition) {
    if (ending || phase == ENDED) {
      reject(transport, "the session has ended");
      return;
    }
    if (!samePeer(tlsSession, transport.tlsSession())) {
      // Before anything changes: a stolen token without the client's certificate neither takes
      // the session nor ends it, and the connection it runs on stays.
      reject(transport, "the RESUME comes with another client certificate than the session's");
      return;
    }
    if (phase == ATTACHED) {
      // The client saw the break before this side did (a half-open connection): the old one goes.
      connectionLost("the client resumed on a new connection");
      if (ending) {
        reject(transport, "the session has ended");
        return;
      }
    }
    cancelPending();
    String problem = null;
    if (transport.headroom() != headroom || transport.coalescesFrames() != coalesces) {
      problem = "the session cannot move to another kind of transport";
    } else if (firstAvailableClientPosition > receivedPosition) {
      problem =
          "the client no longer holds frames from "
              + receivedPosition
              + " on (first available "
              + firstAvailableClientPosition
              + ")";
    } else if (lastReceivedServerPosition < store.firstAvailable()
        || lastReceivedServerPosition > store.end()
        || !store.isBoundary(lastReceivedServerPosition)) {
      problem =
          "the client resumes at server position "
              + lastReceivedServerPosition
              + ", outside the "
              + store.firstAvailable()
              + ".."
              + store.end()
              + " this side holds";
    }
    if (problem != null) {
      reject(transport, problem);
      engine.sessionEnded(CloseReason.Kind.RESUME_FAILED, ErrorCode.REJECTED_RESUME, problem);
      return;
    }
    registry.attached(this);
    current = transport;
    link = new Link(transport);
    transport.setListener(link);
    remoteAddress = transport.remoteAddress();
    localAddress = transport.localAddress();
    tlsSession = transport.tlsSession();
    transport.write(ResumeOkFrame.encode(alloc, headroom, receivedPosition));
    resumed(lastReceivedServerPosition);
  }

  /**
   * Whether a RESUME over {@code now} may take a session set up over {@code was}: always, unless
   * the session's client proved an identity with a certificate (mutual TLS). Then the resuming
   * connection must prove the same one: a certificate for the same subject from the same issuer (so
   * a renewed certificate resumes; another client's, or none, does not).
   */
  static boolean samePeer(javax.net.ssl.SSLSession was, javax.net.ssl.SSLSession now) {
    java.security.cert.Certificate before = peerCertificate(was);
    if (before == null) {
      return true;
    }
    java.security.cert.Certificate after = peerCertificate(now);
    if (after == null) {
      return false;
    }
    if (before instanceof java.security.cert.X509Certificate b
        && after instanceof java.security.cert.X509Certificate a) {
      return b.getSubjectX500Principal().equals(a.getSubjectX500Principal())
          && b.getIssuerX500Principal().equals(a.getIssuerX500Principal());
    }
    return before.equals(after);
  }

  /** The peer's own certificate in {@code session}, or null when it showed none. */
  private static java.security.cert.Certificate peerCertificate(javax.net.ssl.SSLSession session) {
    if (session == null) {
      return null;
    }
    try {
      java.security.cert.Certificate[] chain = session.getPeerCertificates();
      return chain.length == 0 ? null : chain[0];
    } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
      return null;
    }
  }

  /** Answers a RESUME with REJECTED_RESUME and closes that connection. */
  static void reject(Transport transport, String message) {
    transport.write(
        ErrorFrame.encode(
            transport.alloc(), transport.headroom(), 0, ErrorCode.REJECTED_RESUME, message));
    transport.closeGracefully(5_000);
  }

  /** Both sides: the peer has everything before {@code peerPosition}; resend the rest. */
  private void resumed(long peerPosition) {
    store.release(peerPosition);
    boolean complete =
        store.replay(
            peerPosition,
            new ReplayStore.Sink() {
              @Override
              public void writeFrames(ByteBuf frames, int frameCount) {
                current.writeFrames(frames, frameCount);
              }

              @Override
              public void write(ByteBuf frame) {
                current.write(frame);
              }
            });
    if (!complete) {
      failResume(
          ErrorCode.CONNECTION_ERROR,
          "position " + peerPosition + " is not a frame boundary",
          true);
      return;
    }
    phase = ATTACHED;
    attempts = 0;
    lastAckSent = receivedPosition;
    current.setReading(reading);
    full = store.bytes() >= storeBound || budget != null && budget.exhausted();
    LOG.log(
        Level.DEBUG,
        "session with {0} resumed: {1} bytes replayed",
        remoteAddress,
        store.end() - peerPosition);
    engine.sessionResumed();
    current.flush();
  }

  private void attach(Transport transport) {
    current = transport;
    link = new Link(transport);
    transport.setListener(link);
  }

  @Override
  public String toString() {
    return "ResumableSession["
        + (client ? "client" : "server")
        + " phase="
        + phase
        + " resumable="
        + resumable
        + " received="
        + receivedPosition
        + " store="
        + store.firstAvailable()
        + ".."
        + store.end()
        + " ("
        + store.bytes()
        + " bytes in "
        + store.entries()
        + ") full="
        + full
        + " probing="
        + probing
        + " reading="
        + reading
        + " writable="
        + isWritable() // reads current once: toString may run off the loop while it changes
        + "]";
  }
}
