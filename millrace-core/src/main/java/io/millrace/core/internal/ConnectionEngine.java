package io.millrace.core.internal;

import io.millrace.core.Acceptor;
import io.millrace.core.AsyncAcceptor;
import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameFormatException;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameReader;
import io.millrace.frame.FrameType;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The RSocket connection state machine, for the client and the server role alike.
 *
 * <p>Design. One engine per connection, confined to the transport's event loop: every frame, timer
 * and API call runs there, so stream state needs no locks or atomics, and the per-message path is a
 * switch on the frame type, a primitive-keyed map lookup and a listener call. Its jobs are split
 * into helpers that each read on their own: {@link StreamRegistry} (streams and ids), {@link
 * InboundDispatcher} (what each received frame does), {@link FrameWriter} (encoding, fragmenting,
 * batching), {@link Flusher} (when to flush), {@link KeepAlive}, {@link Leases}, {@link CallQueue}
 * (calls from other threads) and {@link ReassemblyBudget} (memory held for fragments).
 *
 * <p>States. A server starts in {@code AWAITING_SETUP}: a timer closes the connection if SETUP does
 * not arrive in time, and anything but SETUP is INVALID_SETUP. On SETUP it is {@code ACCEPTING}
 * while the acceptor decides (reading from the client is suspended meanwhile, and this side may
 * already start requests), then {@code OPEN}. A client sends SETUP and starts in {@code OPEN}.
 * {@code DRAINING} follows a CONNECTION_CLOSE in either direction: no new requests either way (the
 * peer's are answered with REJECTED), open streams finish. The side that asked to close then waits
 * for the peer to close its side; the other closes once its streams are done. Either way the
 * transport closes only after the last frames have reached the socket, and {@link
 * ConnectionConfig#drainTimeout()} bounds it all. {@code CLOSED} is final; the close reason tells
 * how it came. Resumption will add a state between a lost transport and {@code CLOSED}; stream
 * state is already independent of the transport object for that reason.
 *
 * <p>Backpressure: producers see {@link Stream#isReady()} turn false while the transport is not
 * writable and get {@link StreamListener#onReady} when it drains, first come first served. When
 * more than {@link ConnectionConfig#maxQueuedBytes()} wait for a peer that does not read, the
 * engine stops taking frames from that peer, even in the middle of a read batch, until it catches
 * up: a peer cannot make this side buffer without bound.
 *
 * <p>Inbound buffers: the transport passes each frame in and releases it after {@link #onFrame}
 * returns; listeners get views valid during their call (see {@link StreamListener}).
 */
public final class ConnectionEngine implements Connection, TransportListener {
  static {
    Signatures.resolve(ConnectionEngine.class); // so that C2 may inline calls to their methods
  }

  private static final System.Logger LOG = System.getLogger(ConnectionEngine.class.getName());

  static final int AWAITING_SETUP = 0;
  static final int ACCEPTING = 1;
  static final int OPEN = 2;
  static final int DRAINING = 3;
  static final int CLOSED = 4;

  /** Why reading is suspended (bits): the peer does not read, or the acceptor is deciding. */
  private static final int SUSPENDED_FOR_OUTBOUND = 1;

  private static final int SUSPENDED_FOR_ACCEPTOR = 2;

  /** The data of the KEEPALIVE that follows this side's CONNECTION_CLOSE (see {@link #close}). */
  static final ByteBuf DRAIN_BARRIER =
      Unpooled.unreleasableBuffer(
          Unpooled.wrappedBuffer("millrace-drain".getBytes(StandardCharsets.US_ASCII))
              .asReadOnly());

  /** A close after an error waits at most this long for the ERROR frame to reach the socket. */
  private static final long ERROR_LINGER_MILLIS = 5_000;

  final Transport transport;
  final EventExecutor executor;
  private final Runnable writableAgain = this::onWritabilityChanged;
  final ConnectionConfig config;
  final boolean client;
  final FrameWriter writer;
  final StreamRegistry streams;
  final Flusher flusher;
  final Producers producers;
  final Leases leases;
  final ReassemblyBudget reassemblyBudget;
  final UnreadBudget unread;
  final Timers timers;
  private final Acceptor acceptor;
  private final AsyncAcceptor asyncAcceptor;
  private final InboundDispatcher inbound;
  private final KeepAlive keepAlive;
  final CallQueue calls; // package-private for the hand-off tests
  private final CompletableFuture<CloseReason> closeFuture = new CompletableFuture<>();
  private final Timeout deadline = new DeadlineTimeout();
  private final Timeout leaseExpiry = new LeaseExpiryTimeout();

  Responder responder;

  /** The resumable session this engine is carried on, or null (a plain connection). */
  ResumableSession session;

  /** Loop only; {@link #publishedState} is the copy other threads read. */
  private int state;

  private volatile int publishedState;

  private volatile ConnectionListener[] listeners = new ConnectionListener[0];
  private volatile double availability;
  private String metadataMimeType;
  private String dataMimeType;
  private int readSuspensions;
  private boolean drainInitiatedHere;
  private boolean peerAskedToClose;
  private boolean peerInputClosed;
  private boolean drainBarrierPassed;
  private int closeCalls;
  private CloseReason closeReason;

  /**
   * Client: a frame other than ERROR has come from the server, so SETUP was accepted. Set on a
   * server's first frame too, so that the per-frame check is one field read.
   */
  private boolean establishedWithPeer;

  private ConnectionEngine(
      Transport transport,
      ConnectionConfig config,
      boolean client,
      Responder responder,
      Acceptor acceptor,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget serverBudget,
      Timers timers) {
    this.transport = transport;
    this.executor = transport.executor();
    this.config = config;
    this.client = client;
    this.responder = responder;
    this.acceptor = acceptor;
    this.asyncAcceptor = asyncAcceptor;
    this.timers = timers == null ? new LoopTimers(executor) : timers;
    this.writer = new FrameWriter(transport, config, this);
    this.streams = new StreamRegistry(client);
    this.flusher = new Flusher(executor, writer, transport);
    this.producers = new Producers(this, executor, transport, flusher);
    this.leases = new Leases(this.timers);
    this.reassemblyBudget =
        new ReassemblyBudget(config.maxReassemblyBytesPerConnection(), serverBudget);
    this.unread = new UnreadBudget(config.maxUnreadBytes(), executor, this.timers);
    this.inbound = new InboundDispatcher(this);
    this.keepAlive = new KeepAlive(this.timers, new KeepAliveOwner());
    this.calls =
        new CallQueue(this, executor, config.maxQueuedCallBytes(), config.maxQueuedBytes());
  }

  /**
   * Creates the client side of a connection. Call {@link #start} on the event loop once the
   * transport is connected; it sends SETUP.
   */
  public static ConnectionEngine client(
      Transport transport, ConnectionConfig config, Responder responder) {
    return client(transport, config, responder, null);
  }

  /** As {@link #client(Transport, ConnectionConfig, Responder)} with the given timers (tests). */
  static ConnectionEngine client(
      Transport transport, ConnectionConfig config, Responder responder, Timers timers) {
    return new ConnectionEngine(
        transport,
        config,
        true,
        responder == null ? Responder.REJECT_ALL : responder,
        null,
        null,
        null,
        timers);
  }

  /**
   * Resumption tokens: a DRBG seeded from the operating system when first used, then pure
   * computation. The platform default may read the OS's entropy source on each call, which is
   * blocking I/O, and tokens are drawn on the event loop when a reconnecting client opens a
   * session. A holder class, so that the seeding happens at the first token, not when the engine is
   * loaded (on an event loop, for most connections).
   */
  private static final class Tokens {
    static final java.security.SecureRandom SOURCE = source();

    private static java.security.SecureRandom source() {
      java.security.SecureRandom r;
      try {
        r = java.security.SecureRandom.getInstance("DRBG");
      } catch (java.security.NoSuchAlgorithmException e) {
        r = new java.security.SecureRandom();
      }
      r.nextBytes(new byte[1]); // seeds it now
      return r;
    }
  }

  /**
   * Creates the client side of a resumable connection ({@link ConnectionConfig#resumption()} must
   * be set): its SETUP carries a fresh unpredictable token, and when the connection breaks, {@code
   * reconnector} brings new ones on which the session resumes. Call {@link #start} as for {@link
   * #client}.
   */
  public static ConnectionEngine resumableClient(
      Transport transport,
      ConnectionConfig config,
      Responder responder,
      ResumableSession.Reconnector reconnector) {
    return resumableClient(transport, config, responder, reconnector, newResumeToken(), null);
  }

  /** As above, with a token from {@link #newResumeToken()} drawn by the caller. */
  public static ConnectionEngine resumableClient(
      Transport transport,
      ConnectionConfig config,
      Responder responder,
      ResumableSession.Reconnector reconnector,
      byte[] token) {
    return resumableClient(transport, config, responder, reconnector, token, null);
  }

  static ConnectionEngine resumableClient(
      Transport transport,
      ConnectionConfig config,
      Responder responder,
      ResumableSession.Reconnector reconnector,
      Timers timers) {
    return resumableClient(transport, config, responder, reconnector, newResumeToken(), timers);
  }

  private static ConnectionEngine resumableClient(
      Transport transport,
      ConnectionConfig config,
      Responder responder,
      ResumableSession.Reconnector reconnector,
      byte[] token,
      Timers timers) {
    if (config.resumption() == null) {
      throw new IllegalArgumentException("the config has no resumption settings");
    }
    ResumableSession session =
        ResumableSession.client(transport, config.resumption(), token, reconnector);
    ConnectionEngine engine = client(session, config, responder, timers);
    session.bind(engine);
    return engine;
  }

  /**
   * A new resumption token: 16 unpredictable bytes. No I/O once this class is initialised (which
   * seeds the generator from the OS): a client that may open sessions from its event loop touches
   * it once beforehand, off the loop (the suite's blocking detector found the first version reading
   * /dev/urandom on the loop).
   */
  public static byte[] newResumeToken() {
    byte[] token = new byte[16];
    Tokens.SOURCE.nextBytes(token);
    return token;
  }

  /**
   * The server side of an accepted connection, on a server that offers resumption when {@code
   * sessions} is not null (null: a plain connection): the connection becomes resumable if its SETUP
   * asks, and a RESUME as its first frame hands it to the session it names.
   */
  public static ConnectionEngine resumableServer(
      Transport transport,
      ConnectionConfig config,
      Acceptor acceptor,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget serverBudget,
      ResumeSessions sessions) {
    return resumableServer(
        transport, config, acceptor, asyncAcceptor, serverBudget, sessions, null);
  }

  static ConnectionEngine resumableServer(
      Transport transport,
      ConnectionConfig config,
      Acceptor acceptor,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget serverBudget,
      ResumeSessions sessions,
      Timers timers) {
    if (sessions == null) {
      return server(transport, config, acceptor, asyncAcceptor, serverBudget, timers);
    }
    ResumableSession session = ResumableSession.server(transport, sessions);
    ConnectionEngine engine =
        server(session, config, acceptor, asyncAcceptor, serverBudget, timers);
    session.bind(engine);
    return engine;
  }

  /** Creates the server side of an accepted connection; {@link #start} arms the setup timer. */
  public static ConnectionEngine server(
      Transport transport,
      ConnectionConfig config,
      Acceptor acceptor,
      ReassemblyBudget serverBudget) {
    return server(transport, config, acceptor, null, serverBudget, null);
  }

  /** A server connection whose SETUP is decided by {@code asyncAcceptor}. */
  public static ConnectionEngine asyncServer(
      Transport transport,
      ConnectionConfig config,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget serverBudget) {
    return server(transport, config, null, asyncAcceptor, serverBudget, null);
  }

  static ConnectionEngine server(
      Transport transport,
      ConnectionConfig config,
      Acceptor acceptor,
      AsyncAcceptor asyncAcceptor,
      ReassemblyBudget serverBudget,
      Timers timers) {
    if ((acceptor == null) == (asyncAcceptor == null)) {
      throw new IllegalArgumentException("exactly one of acceptor and asyncAcceptor");
    }
    return new ConnectionEngine(
        transport, config, false, null, acceptor, asyncAcceptor, serverBudget, timers);
  }

  // ---------------------------------------------------------------- transport-facing

  /**
   * Client: sends SETUP with {@code setupMetadata} and {@code setupData} (both nullable, ownership
   * taken). Server: starts waiting for SETUP (pass nulls). Event loop only; call once.
   */
  public void start(ByteBuf setupMetadata, ByteBuf setupData) {
    checkInEventLoop();
    if (client) {
      metadataMimeType = config.metadataMimeType();
      dataMimeType = config.dataMimeType();
      leases.enable(config.lease());
      setState(OPEN);
      ByteBuf token = session != null ? Unpooled.wrappedBuffer(session.token()) : null;
      try {
        writer.write(
            SetupFrame.encode(
                writer.alloc(),
                writer.headroom(),
                config.lease(),
                (int) config.keepAliveInterval().toMillis(),
                (int) config.maxLifetime().toMillis(),
                token,
                metadataMimeType,
                dataMimeType,
                setupMetadata,
                setupData));
      } finally {
        DefaultStream.release(setupMetadata, setupData);
      }
      keepAlive.start(config.keepAliveInterval().toMillis(), config.maxLifetime().toMillis(), true);
      if (config.lease() && config.leaseIssuer() != null) {
        startLeaseIssuer();
      }
      flusher.flushNow();
    } else {
      DefaultStream.release(setupMetadata, setupData);
      setState(AWAITING_SETUP);
      timers.schedule(
          deadline, timers.nanoTime() + TimeUnit.MILLISECONDS.toNanos(setupTimeoutMillis()));
    }
  }

  private long setupTimeoutMillis() {
    return config.setupTimeout().toMillis();
  }

  /**
   * One inbound frame without its length prefix. The caller keeps ownership and releases it after
   * this returns. Event loop only.
   */
  @Override
  public void onFrame(ByteBuf frame) {
    flusher.beginRead();
    int writesBefore = flusher.writesThisTurn();
    int s = state;
    if (s == CLOSED) {
      return;
    }
    if (!establishedWithPeer) {
      noteFirstFrameFromServer(frame);
    }
    try {
      if (s == AWAITING_SETUP && !firstFrameIsSetup(frame)) {
        return;
      }
      FrameReader.read(frame, inbound);
    } catch (FrameFormatException e) {
      int code = state == AWAITING_SETUP ? ErrorCode.INVALID_SETUP : ErrorCode.CONNECTION_ERROR;
      LOG.log(Level.DEBUG, "malformed frame from {0}: {1}", remoteAddress(), e.getMessage());
      terminate(CloseReason.Kind.ERROR_SENT, code, e.getMessage(), true);
      return;
    }
    // The bound on bytes queued for the peer holds per request, not per read batch: once a
    // frame's answers pass it, the next frame waits until the peer reads.
    if (flusher.writesThisTurn() != writesBefore
        && (readSuspensions & SUSPENDED_FOR_OUTBOUND) == 0
        && !transport.isWritable()
        && transport.queuedBytes() > config.maxQueuedBytes()
        && state != CLOSED) {
      LOG.log(
          Level.DEBUG,
          "{0} is not reading: pausing reads with {1} bytes queued",
          remoteAddress(),
          transport.queuedBytes());
      suspendReading(SUSPENDED_FOR_OUTBOUND);
    }
  }

  /** Client: the first frame other than ERROR shows the server took the SETUP. */
  private void noteFirstFrameFromServer(ByteBuf frame) {
    if (!client
        || frame.readableBytes() >= FrameHeader.SIZE
            && FrameHeader.type(frame) != FrameType.ERROR) {
      establishedWithPeer = true; // a server has nothing to learn here
    }
  }

  private boolean firstFrameIsSetup(ByteBuf frame) {
    int type =
        frame.readableBytes() >= FrameHeader.SIZE ? FrameHeader.type(frame) : FrameType.RESERVED;
    if (type == FrameType.RESUME) {
      terminate(
          CloseReason.Kind.ERROR_SENT,
          ErrorCode.REJECTED_RESUME,
          "resumption is not supported",
          true);
      return false;
    }
    if (type != FrameType.SETUP) {
      terminate(
          CloseReason.Kind.ERROR_SENT,
          ErrorCode.INVALID_SETUP,
          "expected SETUP as the first frame, got " + FrameType.name(type),
          true);
      return false;
    }
    return true;
  }

  /**
   * The transport read a frame longer than {@link ConnectionConfig#maxFrameLength()}; the engine
   * closes the connection with CONNECTION_ERROR.
   */
  @Override
  public void onFrameTooLong(long length) {
    terminate(
        CloseReason.Kind.ERROR_SENT,
        ErrorCode.CONNECTION_ERROR,
        "frame of " + length + " bytes exceeds the limit of " + config.maxFrameLength(),
        true);
  }

  /** The transport finished a batch of reads: flush what the batch produced. */
  @Override
  public void onReadComplete() {
    flusher.endRead();
    keepAlive.received(timers.nanoTime());
  }

  /** The transport's writability changed. */
  @Override
  public void onWritabilityChanged() {
    if (!transport.isWritable() || state == CLOSED) {
      return;
    }
    if (flusher.flushingInsideAWrite()) {
      // Told from inside a flush at the end of a frame's write: that frame may be one fragment of
      // a message, or carry a COMPLETE its stream has not recorded yet, so producers and waiters
      // hear of it from the next task rather than write in the middle of it.
      try {
        executor.execute(writableAgain);
      } catch (RejectedExecutionException e) {
        // the loop is shutting down: nobody will write again
      }
      return;
    }
    if ((readSuspensions & SUSPENDED_FOR_OUTBOUND) != 0) {
      resumeReading(SUSPENDED_FOR_OUTBOUND);
    }
    notifyListeners(l -> l.onWritable(this));
    producers.writable();
    calls.releaseWaitersIfReady();
  }

  /**
   * The peer closed its side of the transport: nothing more will arrive. While draining, a peer
   * closes its side only when it has nothing left to do (Millrace's peers once their streams are
   * done, rsocket-java when it disposes the connection), so streams still open here can never
   * finish: they fail and the close completes. Otherwise the peer left without a goodbye.
   */
  @Override
  public void onInputClosed() {
    peerInputClosed = true;
    switch (state) {
      case CLOSED:
        return;
      case DRAINING:
        if (!streams.isEmpty()) {
          long left = Math.max(0, deadline.deadlineNanos - timers.nanoTime());
          flusher.flushNow();
          enterClosed(ErrorCode.CONNECTION_CLOSE, "the peer closed the connection");
          transport.closeGracefully(TimeUnit.NANOSECONDS.toMillis(left));
          return;
        }
        maybeFinishDrain();
        return;
      default:
        terminate(
            CloseReason.Kind.TRANSPORT_CLOSED,
            ErrorCode.CONNECTION_ERROR,
            "the peer closed the connection",
            false);
    }
  }

  /** The transport failed; it closes next. */
  @Override
  public void onTransportError(Throwable cause) {
    LOG.log(Level.DEBUG, "I/O error on the connection with " + remoteAddress(), cause);
    if (closeReason == null) {
      closeReason =
          new CloseReason(
              CloseReason.Kind.IO_ERROR,
              ErrorCode.CONNECTION_ERROR,
              String.valueOf(cause.getMessage()),
              cause);
    }
  }

  /** The transport closed. Event loop only; the last call a transport makes. */
  @Override
  public void onTransportClosed() {
    if (closeReason == null) {
      closeReason =
          new CloseReason(
              CloseReason.Kind.TRANSPORT_CLOSED,
              ErrorCode.CONNECTION_ERROR,
              "the connection was closed",
              null);
    }
    enterClosed();
    if (closeFuture.complete(closeReason)) {
      notifyListeners(l -> l.onClosed(this, closeReason));
    }
    calls.onClosed();
  }

  // ---------------------------------------------------------------- Connection

  @Override
  public EventExecutor executor() {
    return executor;
  }

  @Override
  public ByteBufAllocator alloc() {
    return transport.alloc();
  }

  /**
   * The transport this engine writes to: the connection's own, or a resumable session standing in
   * front of the connection it has now. For diagnostics and tests.
   */
  public Transport transport() {
    return transport;
  }

  @Override
  public String metadataMimeType() {
    return metadataMimeType;
  }

  @Override
  public String dataMimeType() {
    return dataMimeType;
  }

  @Override
  public SocketAddress remoteAddress() {
    return transport.remoteAddress();
  }

  @Override
  public SocketAddress localAddress() {
    return transport.localAddress();
  }

  @Override
  public javax.net.ssl.SSLSession tlsSession() {
    return transport.tlsSession();
  }

  @Override
  public boolean isWritable() {
    return transport.isWritable();
  }

  @Override
  public boolean isReadyForCalls() {
    return calls.isReady();
  }

  @Override
  public void whenReadyForCalls(Runnable callback) {
    calls.whenReady(callback);
  }

  @Override
  public boolean awaitReadyForCalls(Duration timeout) throws InterruptedException {
    return calls.awaitReady(timeout.toNanos());
  }

  @Override
  public double availability() {
    return availability;
  }

  @Override
  public int activeStreams() {
    return executor.inEventLoop() ? streams.size() : streams.sizeForAnyThread();
  }

  @Override
  public void addListener(ConnectionListener listener) {
    synchronized (this) {
      ConnectionListener[] old = listeners;
      ConnectionListener[] grown = java.util.Arrays.copyOf(old, old.length + 1);
      grown[old.length] = listener;
      listeners = grown;
    }
  }

  @Override
  public boolean isOpen() {
    return publishedState != CLOSED;
  }

  @Override
  public boolean isDraining() {
    return publishedState == DRAINING;
  }

  @Override
  public CompletionStage<CloseReason> onClose() {
    return closeFuture.minimalCompletionStage();
  }

  @Override
  public boolean fireAndForget(ByteBuf metadata, ByteBuf data) {
    if (!executor.inEventLoop()) {
      calls.offer(new Calls.FireAndForget(metadata, data));
      return true;
    }
    int id = fireAndForgetId();
    if (id == 0) {
      DefaultStream.release(metadata, data);
      return false;
    }
    try {
      writer.request(FrameType.REQUEST_FNF, id, 0, false, metadata, data);
    } catch (RuntimeException e) {
      throw unusableBuffer("fire-and-forget", e);
    }
    return true;
  }

  @Override
  public <T> boolean fireAndForget(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    checkEncoded(metadata, value, encoder);
    if (!executor.inEventLoop()) {
      int dataLength = lengthOrRelease(metadata, value, encoder);
      if (!writer.batches(0, metadata, dataLength)) {
        return fireAndForget(metadata, toBufferOrRelease(metadata, value, encoder));
      }
      calls.offer(new Calls.EncodedFireAndForget<>(metadata, value, encoder, dataLength));
      return true;
    }
    int id = fireAndForgetId();
    if (id == 0) {
      DefaultStream.release(metadata, null);
      return false;
    }
    writer.request(FrameType.REQUEST_FNF, id, 0, false, metadata, value, encoder);
    return true;
  }

  /**
   * Off the loop, before a value is handed over to be encoded there: {@code encoder}'s length for
   * it. A failing or negative length throws here, to the caller, with {@code metadata} released.
   */
  private static <T> int lengthOrRelease(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    try {
      return FrameWriter.encodedLength(encoder, value);
    } catch (Throwable e) {
      DefaultStream.release(metadata, null);
      throw e;
    }
  }

  /**
   * Off the loop, for a value whose frame will not go into a batch: encoded into a buffer of its
   * own now, on the caller's thread, rather than on the loop, which would gain nothing by it.
   */
  private <T> ByteBuf toBufferOrRelease(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    try {
      return encoder.toBuffer(value, alloc());
    } catch (Throwable e) {
      DefaultStream.release(metadata, null);
      throw e;
    }
  }

  /**
   * Null values and encoders are refused at once, on any thread, with {@code metadata} released.
   */
  private static void checkEncoded(ByteBuf metadata, Object value, PayloadEncoder<?> encoder) {
    if (value == null || encoder == null) {
      DefaultStream.release(metadata, null);
      throw new NullPointerException(value == null ? "value" : "encoder");
    }
  }

  /** On the loop: a fire-and-forget's stream id, or 0 when it may not go out now (logged). */
  private int fireAndForgetId() {
    String refusal = refuseRequest();
    if (refusal != null) {
      LOG.log(Level.DEBUG, "fire-and-forget not sent: {0}", refusal);
      return 0;
    }
    return streams.allocateId();
  }

  @Override
  public void metadataPush(ByteBuf metadata) {
    if (!executor.inEventLoop()) {
      calls.offer(new Calls.MetadataPush(metadata));
      return;
    }
    if (state != OPEN && state != DRAINING) {
      metadata.release();
      return;
    }
    try {
      writer.metadataPush(metadata);
    } catch (RuntimeException e) {
      throw unusableBuffer("metadata push", e);
    }
  }

  @Override
  public Stream requestResponse(ByteBuf metadata, ByteBuf data, StreamListener listener) {
    DefaultStream stream = new DefaultStream(this, DefaultStream.REQUEST_RESPONSE, true, listener);
    startRequest(stream, FrameType.REQUEST_RESPONSE, metadata, data, 1, false);
    return stream;
  }

  @Override
  public <T> Stream requestResponse(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, StreamListener listener) {
    checkEncoded(metadata, value, encoder);
    DefaultStream stream = new DefaultStream(this, DefaultStream.REQUEST_RESPONSE, true, listener);
    startRequest(stream, FrameType.REQUEST_RESPONSE, metadata, value, encoder, 1);
    return stream;
  }

  @Override
  public <T> Stream requestStream(
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder,
      long initialRequestN,
      StreamListener listener) {
    checkEncoded(metadata, value, encoder);
    checkRequestN(initialRequestN, metadata, null);
    DefaultStream stream = new DefaultStream(this, DefaultStream.REQUEST_STREAM, true, listener);
    startRequest(stream, FrameType.REQUEST_STREAM, metadata, value, encoder, initialRequestN);
    return stream;
  }

  @Override
  public Stream requestStream(
      ByteBuf metadata, ByteBuf data, long initialRequestN, StreamListener listener) {
    checkRequestN(initialRequestN, metadata, data);
    DefaultStream stream = new DefaultStream(this, DefaultStream.REQUEST_STREAM, true, listener);
    startRequest(stream, FrameType.REQUEST_STREAM, metadata, data, initialRequestN, false);
    return stream;
  }

  @Override
  public Stream requestChannel(
      ByteBuf metadata,
      ByteBuf data,
      long initialRequestN,
      boolean complete,
      StreamListener listener) {
    checkRequestN(initialRequestN, metadata, data);
    DefaultStream stream = new DefaultStream(this, DefaultStream.REQUEST_CHANNEL, true, listener);
    startRequest(stream, FrameType.REQUEST_CHANNEL, metadata, data, initialRequestN, complete);
    return stream;
  }

  @Override
  public void sendLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    if (ttlMillis <= 0 || numberOfRequests < 0) {
      release(metadata);
      throw new IllegalArgumentException("ttl must be positive and requests not negative");
    }
    if (!executor.inEventLoop()) {
      calls.offer(new Calls.Lease(ttlMillis, numberOfRequests, metadata));
      return;
    }
    if (state == CLOSED) {
      release(metadata);
      return;
    }
    if (!leases.enabled()) {
      release(metadata);
      throw new IllegalStateException("leases were not negotiated on this connection");
    }
    leases.granted(ttlMillis, numberOfRequests);
    writer.lease(ttlMillis, numberOfRequests, metadata);
  }

  @Override
  public void close() {
    if (!executor.inEventLoop()) {
      calls.offer(Calls.CLOSE);
      return;
    }
    if (session != null && session.isResumable() && session.phase() != ResumableSession.ATTACHED) {
      // No connection to say goodbye on: the session just ends.
      sessionEnded(
          CloseReason.Kind.CLOSED_BY_THIS_SIDE,
          ErrorCode.CONNECTION_CLOSE,
          "closed by this side while disconnected");
      return;
    }
    if (closeCalls++ > 0 && state == DRAINING) {
      dispose(); // a second close escalates
      return;
    }
    switch (state) {
      case CLOSED:
        return;
      case AWAITING_SETUP:
      case ACCEPTING:
        // A client whose SETUP is in flight learns why, and may retry elsewhere.
        terminate(
            CloseReason.Kind.CLOSED_BY_THIS_SIDE,
            ErrorCode.REJECTED_SETUP,
            "the server is shutting down",
            true);
        return;
      case OPEN:
        writer.error(0, ErrorCode.CONNECTION_CLOSE, "closing");
        // The peer answers this KEEPALIVE after it has read the CONNECTION_CLOSE, so once the
        // answer is back every request it sent before learning of the close has arrived (and
        // been answered REJECTED): after that this side's end of stream loses nothing. The same
        // barrier as HTTP/2's GOAWAY followed by PING. rsocket-java answers KEEPALIVE even after
        // CONNECTION_CLOSE, though it never closes the connection itself on it.
        writer.keepAlive(true, DRAIN_BARRIER.duplicate());
        enterDraining(localClose(), true);
        return;
      default: // DRAINING because the peer asked: this side now asks too
    }
  }

  /**
   * Closes gracefully for a server's or client's shutdown: as {@link #close()} the first time, but
   * it never counts as the second call that escalates, so a connection the application is already
   * closing keeps draining. Any thread.
   */
  public void closeForShutdown() {
    if (!executor.inEventLoop()) {
      calls.offer(Calls.CLOSE_FOR_SHUTDOWN);
      return;
    }
    if (state != DRAINING && state != CLOSED) {
      close();
    }
  }

  private static CloseReason localClose() {
    return new CloseReason(
        CloseReason.Kind.CLOSED_BY_THIS_SIDE,
        ErrorCode.CONNECTION_CLOSE,
        "connection closed by this side",
        null);
  }

  @Override
  public void dispose() {
    if (!executor.inEventLoop()) {
      calls.offer(Calls.DISPOSE);
      return;
    }
    if (state == CLOSED) {
      return;
    }
    closeReason =
        new CloseReason(CloseReason.Kind.DISPOSED, ErrorCode.CANCELED, "connection disposed", null);
    flusher.flushNow();
    enterClosed();
    transport.close();
  }

  // ---------------------------------------------------------------- package-private helpers

  FrameWriter writer() {
    return writer;
  }

  int state() {
    return state;
  }

  boolean establishedWithPeer() {
    return establishedWithPeer;
  }

  boolean transportWritable() {
    return transport.isWritable();
  }

  /** Bytes waiting in the transport for the peer; read off the loop by {@link CallQueue}. */
  long transportQueuedBytes() {
    return transport.queuedBytes();
  }

  void checkInEventLoop() {
    if (!executor.inEventLoop()) {
      throw new IllegalStateException(
          "stream methods must be called on the connection's event loop: use"
              + " connection.executor().execute(...)");
    }
  }

  /** Called by {@link FrameWriter} after every write. */
  void onWritten() {
    flusher.onWritten();
  }

  /** Called by {@link FrameWriter} when it gave the transport {@code bytes} (a batch, a frame). */
  void onHandedOver(int bytes) {
    flusher.onHandedOver(bytes);
  }

  /** Bytes the calls from other threads hold while they wait for the loop (with bookkeeping). */
  long queuedCallBytes() {
    return calls.queuedBytes();
  }

  /** After a batch of handed-over calls: one flush for all of them. */
  void afterHandOff() {
    flusher.flushNow();
  }

  void remove(DefaultStream stream) {
    producers.remove(stream);
    if (streams.remove(stream) && state == DRAINING && streams.isEmpty()) {
      maybeFinishDrain();
    }
  }

  void listenerFailed(DefaultStream stream, Throwable e) {
    logListenerFailure(stream, e);
    if (stream.requester() && stream.kind() != DefaultStream.REQUEST_CHANNEL) {
      stream.cancel();
    } else {
      stream.fail(e);
    }
  }

  /**
   * What the peer is told when application code threw: a {@link StreamErrorException}'s own message
   * (thrown to be sent); otherwise a fixed text, since an exception's message may carry internals
   * (grpc-java sends none either), or the message itself when {@link
   * ConnectionConfig#errorMessagesFromHandlers()} is on.
   */
  String failureMessage(String fixed, Throwable e) {
    if (sentOnPurpose(e) || config.errorMessagesFromHandlers()) {
      String m = e.getMessage();
      return m != null ? m : e.getClass().getName();
    }
    return fixed;
  }

  /** A StreamErrorException raised to be sent, not one received from elsewhere and passed on. */
  private static boolean sentOnPurpose(Throwable e) {
    return e instanceof StreamErrorException && !((StreamErrorException) e).isReceived();
  }

  /**
   * The code an ERROR frame on a stream carries for a failure of application code: a {@link
   * StreamErrorException}'s own code when a stream may carry it, APPLICATION_ERROR otherwise.
   */
  static int failureCode(Throwable e) {
    if (sentOnPurpose(e)) {
      int code = ((StreamErrorException) e).errorCode();
      if (ErrorCode.isStreamLevel(code)) {
        return code;
      }
    }
    return ErrorCode.APPLICATION_ERROR;
  }

  void logListenerFailure(DefaultStream stream, Throwable e) {
    LOG.log(Level.WARNING, "listener of " + stream + " threw", e);
  }

  void logUnusableBuffer(DefaultStream stream, RuntimeException e) {
    LOG.log(Level.WARNING, "unusable payload buffer passed to " + stream, e);
  }

  void logUnusablePayload(DefaultStream stream, Throwable e) {
    LOG.log(Level.WARNING, "a payload passed to " + stream + " could not be encoded", e);
  }

  void logCallbackFailure(String what, Throwable e) {
    LOG.log(Level.WARNING, what + " threw", e);
  }

  /**
   * The exception a fire-and-forget or metadata push throws to its caller on the event loop when
   * its buffer cannot be encoded; nothing was written.
   */
  private static IllegalArgumentException unusableBuffer(String what, RuntimeException cause) {
    return new IllegalArgumentException(
        "the " + what + " payload buffer is unusable (released?); nothing was sent", cause);
  }

  /** Releases a reassembly and takes its bytes off the budgets. */
  void releaseReassembly(Reassembly reassembly) {
    reassemblyBudget.release(reassembly.held());
    reassembly.release();
  }

  int closeCode() {
    return closeReason == null ? ErrorCode.CONNECTION_ERROR : closeReason.errorCode();
  }

  String closeMessage() {
    return closeReason == null ? "connection closed" : closeReason.message();
  }

  /** Test hook: the id the next request will try, to reach the wrap-around quickly. */
  void nextStreamIdForTest(int id) {
    checkInEventLoop();
    streams.nextIdForTest(id);
  }

  // ---------------------------------------------------------------- requests

  static void checkRequestN(long n, ByteBuf metadata, ByteBuf data) {
    if (n <= 0) {
      DefaultStream.release(metadata, data);
      throw new IllegalArgumentException("initial request-n must be positive: " + n);
    }
  }

  private void startRequest(
      DefaultStream stream,
      int type,
      ByteBuf metadata,
      ByteBuf data,
      long initialRequestN,
      boolean complete) {
    if (!executor.inEventLoop()) {
      calls.offer(new Calls.Request(stream, type, metadata, data, initialRequestN, complete));
      return;
    }
    sendRequest(stream, type, metadata, data, initialRequestN, complete);
  }

  /** {@link #startRequest} of a request-response or request-stream whose data is encoded. */
  private <T> void startRequest(
      DefaultStream stream,
      int type,
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder,
      long initialRequestN) {
    if (!executor.inEventLoop()) {
      int dataLength = lengthOrRelease(metadata, value, encoder);
      int extra = type == FrameType.REQUEST_STREAM ? 4 : 0;
      if (!writer.batches(extra, metadata, dataLength)) {
        ByteBuf data = toBufferOrRelease(metadata, value, encoder);
        calls.offer(new Calls.Request(stream, type, metadata, data, initialRequestN, false));
        return;
      }
      calls.offer(
          new Calls.EncodedRequest<>(
              stream, type, metadata, value, encoder, dataLength, initialRequestN));
      return;
    }
    sendRequest(stream, type, metadata, value, encoder, initialRequestN);
  }

  /**
   * Sends a request-response or request-stream whose data is encoded into its frame, from the loop
   * (directly or handed over). A value that fails to encode fails the stream, as an unusable buffer
   * does.
   */
  <T> void sendRequest(
      DefaultStream stream,
      int type,
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder,
      long initialRequestN) {
    if (!register(stream, initialRequestN, false)) {
      DefaultStream.release(metadata, null);
      return;
    }
    try {
      writer.request(type, stream.id, initialRequestN, false, metadata, value, encoder);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // The encoder failed (a deeply nested message, a bug in it) or the metadata was unusable.
      // Nothing of the request was written: only this call fails, and it does not hang.
      streams.remove(stream);
      logUnusablePayload(stream, e);
      stream.failLocally(ErrorCode.INVALID, "the request's data could not be encoded: " + e);
    }
  }

  /**
   * Takes a stream id for a request about to be written and registers its stream; false when it
   * must not go out (cancelled meanwhile, or refused: the listener is told), and the caller
   * releases what it holds.
   */
  private boolean register(DefaultStream stream, long initialRequestN, boolean complete) {
    if (stream.has(DefaultStream.CANCELLED) || stream.inboundDone()) {
      // Cancelled (or failed) by the application before the hand-off reached the loop: there is
      // nothing to send, and the listener already knows.
      return false;
    }
    String refusal = refuseRequest();
    if (refusal != null) {
      stream.failLocally(refusalCode(), refusal);
      return false;
    }
    stream.id = streams.allocateId();
    stream.inboundCredit = initialRequestN >= Integer.MAX_VALUE ? Long.MAX_VALUE : initialRequestN;
    if (stream.kind() != DefaultStream.REQUEST_CHANNEL || complete) {
      stream.markOutboundDone();
    }
    streams.add(stream);
    return true;
  }

  /** Sends a request from the loop (directly or handed over). */
  void sendRequest(
      DefaultStream stream,
      int type,
      ByteBuf metadata,
      ByteBuf data,
      long initialRequestN,
      boolean complete) {
    if (!register(stream, initialRequestN, complete)) {
      DefaultStream.release(metadata, data);
      return;
    }
    try {
      writer.request(type, stream.id, initialRequestN, complete, metadata, data);
    } catch (RuntimeException e) {
      // Nothing of the request was written: only this call fails.
      streams.remove(stream);
      logUnusableBuffer(stream, e);
      stream.failLocally(ErrorCode.INVALID, "the request's payload buffer is unusable: " + e);
    }
  }

  /** {@link #sendFireAndForget(ByteBuf, ByteBuf)} of a fire-and-forget whose data is encoded. */
  <T> void sendFireAndForget(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    try {
      if (!fireAndForget(metadata, value, encoder)) {
        notSentFromAnotherThread();
      }
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // Not thrown on: the calls queued behind this one are still sent.
      LOG.log(
          Level.WARNING,
          "fire-and-forget from another thread not sent: its data did not encode",
          e);
    }
  }

  /** Sends a fire-and-forget handed over from another thread. */
  void sendFireAndForget(ByteBuf metadata, ByteBuf data) {
    try {
      if (!fireAndForget(metadata, data)) {
        notSentFromAnotherThread();
      }
    } catch (IllegalArgumentException e) {
      LOG.log(Level.WARNING, "fire-and-forget from another thread not sent", e);
    }
  }

  private static void notSentFromAnotherThread() {
    LOG.log(
        Level.WARNING,
        "fire-and-forget from another thread not sent: the connection is closing or closed,"
            + " or no lease allows it");
  }

  /** Why a new request cannot go out now, or null when it can. Consumes a unit of lease. */
  private String refuseRequest() {
    switch (state) {
      case CLOSED:
        return closeMessage();
      case DRAINING:
        return "the connection is closing";
      case AWAITING_SETUP:
        return "the connection is not set up yet";
      default:
        if (!leases.takeRequester()) {
          return "no lease from the peer allows this request";
        }
        if (leases.enabled()) {
          publishAvailability();
        }
        return null;
    }
  }

  private int refusalCode() {
    return state == CLOSED ? closeCode() : ErrorCode.REJECTED;
  }

  // ---------------------------------------------------------------- setup (server)

  /** SETUP arrived and passed the checks: ask the acceptor. */
  void accept(io.millrace.core.ConnectionSetup setup, boolean lease) {
    metadataMimeType = setup.metadataMimeType();
    dataMimeType = setup.dataMimeType();
    leases.enable(lease);
    setState(ACCEPTING);
    if (acceptor != null) {
      Responder accepted;
      try {
        accepted = acceptor.accept(setup, this);
      } catch (RuntimeException e) {
        acceptanceFailed(e);
        return;
      }
      if (state == ACCEPTING) { // the acceptor may have closed the connection itself
        accepted(accepted, setup.keepAliveIntervalMillis(), setup.maxLifetimeMillis());
      }
      return;
    }
    CompletionStage<Responder> decision;
    try {
      decision = asyncAcceptor.accept(setup, this);
    } catch (RuntimeException e) {
      acceptanceFailed(e);
      return;
    }
    int keepAliveMillis = setup.keepAliveIntervalMillis();
    int maxLifetimeMillis = setup.maxLifetimeMillis();
    if (state != ACCEPTING) {
      return; // closed by the acceptor itself
    }
    suspendReading(SUSPENDED_FOR_ACCEPTOR);
    decision.whenComplete(
        (accepted, failure) -> {
          Runnable done =
              () -> {
                if (state != ACCEPTING) {
                  return; // closed meanwhile (setup timeout, shutdown, the client left)
                }
                resumeReading(SUSPENDED_FOR_ACCEPTOR);
                if (failure != null) {
                  acceptanceFailed(failure);
                } else {
                  accepted(accepted, keepAliveMillis, maxLifetimeMillis);
                }
                flusher.flushNow();
              };
          if (executor.inEventLoop()) {
            done.run();
          } else {
            executor.execute(done);
          }
        });
  }

  private void acceptanceFailed(Throwable e) {
    Throwable cause =
        e instanceof java.util.concurrent.CompletionException && e.getCause() != null
            ? e.getCause()
            : e;
    if (cause instanceof io.millrace.core.SetupException) {
      io.millrace.core.SetupException rejection = (io.millrace.core.SetupException) cause;
      terminate(CloseReason.Kind.ERROR_SENT, rejection.errorCode(), rejection.getMessage(), true);
      return;
    }
    LOG.log(Level.WARNING, "acceptor failed", cause);
    String message =
        cause instanceof RuntimeException
            ? failureMessage("the acceptor failed", cause)
            : "the acceptor failed";
    terminate(CloseReason.Kind.ERROR_SENT, ErrorCode.REJECTED_SETUP, message, true);
  }

  private void accepted(Responder accepted, int keepAliveMillis, int maxLifetimeMillis) {
    if (accepted == null) {
      terminate(
          CloseReason.Kind.ERROR_SENT, ErrorCode.REJECTED_SETUP, "rejected by the server", true);
      return;
    }
    responder = accepted;
    timers.cancel(deadline);
    setState(OPEN);
    // Silence is tolerated for the smaller of the client's max lifetime and this server's own.
    keepAlive.start(
        keepAliveMillis, Math.min(maxLifetimeMillis, config.maxLifetime().toMillis()), false);
    if (leases.enabled()) {
      startLeaseIssuer();
    }
  }

  private void startLeaseIssuer() {
    try {
      config.leaseIssuer().onConnected(this);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "lease issuer threw", e);
      terminate(
          CloseReason.Kind.ERROR_SENT, ErrorCode.CONNECTION_ERROR, "lease issuer failed", true);
    }
  }

  // ---------------------------------------------------------------- leases

  /** The peer granted this side a lease. */
  void leaseReceived(int ttlMillis, int numberOfRequests) {
    long expiry = leases.received(ttlMillis, numberOfRequests);
    timers.schedule(leaseExpiry, expiry);
    publishAvailability();
    notifyListeners(l -> l.onLeaseGranted(this, ttlMillis, numberOfRequests));
  }

  private final class LeaseExpiryTimeout extends Timeout {
    @Override
    void expire(long nowNanos) {
      publishAvailability();
      notifyListeners(l -> l.onLeaseExpired(ConnectionEngine.this));
    }
  }

  private void publishAvailability() {
    boolean connected = session == null || session.phase() == ResumableSession.ATTACHED;
    // A resumable connection waiting for a new transport takes requests but cannot answer them
    // yet: a load balancer should prefer another.
    availability = state == OPEN && connected ? leases.requesterAvailability() : 0.0;
  }

  // ---------------------------------------------------------------- reading suspension

  private void suspendReading(int reason) {
    int before = readSuspensions;
    readSuspensions |= reason;
    if (before == 0) {
      transport.setReading(false);
    }
  }

  private void resumeReading(int reason) {
    int before = readSuspensions;
    readSuspensions &= ~reason;
    if (before != 0 && readSuspensions == 0 && state != CLOSED) {
      transport.setReading(true);
    }
  }

  // ---------------------------------------------------------------- resumption

  /** The session lost its connection and waits for a new one: liveness checks pause. */
  void sessionDetached(String why) {
    keepAlive.stop();
    leases.forgetReceived(); // leases do not survive resumption: the peer grants afresh
    publishAvailability();
    notifyListeners(l -> l.onDisconnected(this, why));
  }

  /** The client session will try a new connection in {@code delayMillis}. */
  void reconnecting(int attempt, long delayMillis) {
    notifyListeners(l -> l.onReconnecting(this, attempt, delayMillis));
  }

  /** The session is carried on a new connection: liveness checks restart, producers wake. */
  void sessionResumed() {
    if (state == CLOSED) {
      return;
    }
    keepAlive.restart(); // not before the acceptor has taken the SETUP
    int ttl = leases.enabled() ? leases.responderRemainingMillis() : 0;
    int requests = leases.responderLeft();
    if (ttl > 0 && requests > 0) {
      // Leases do not survive resumption (spec): what is left of this side's grant is granted
      // afresh, never more (a client that keeps reconnecting does not multiply its allowance).
      leases.granted(ttl, requests);
      writer.lease(ttl, requests, null);
    }
    if (state == DRAINING && drainInitiatedHere && !drainBarrierPassed) {
      // CONNECTION_CLOSE and its barrier are connection frames, not replayed: say them again.
      writer.error(0, ErrorCode.CONNECTION_CLOSE, "closing");
      writer.keepAlive(true, DRAIN_BARRIER.duplicate());
    }
    publishAvailability();
    notifyListeners(l -> l.onResumed(this));
    onWritabilityChanged();
  }

  /** The server answered RESUME with REJECTED_RESUME: the session is over, and not retried. */
  void resumeRejected(String message) {
    notifyListeners(l -> l.onResumeRejected(this, message));
    sessionEnded(
        CloseReason.Kind.RESUME_REJECTED,
        ErrorCode.REJECTED_RESUME,
        "the server rejected the resumption: " + message);
  }

  /** The session ends without a connection to tell the peer on: open streams fail. */
  void sessionEnded(CloseReason.Kind kind, int code, String message) {
    terminate(kind, code, message, false);
  }

  /**
   * Server: this connection's first frame resumed another session, which took the transport over.
   * This engine, which never saw a SETUP, ends without touching the transport.
   */
  void handedOver() {
    closeReason =
        new CloseReason(
            CloseReason.Kind.TRANSPORT_CLOSED,
            ErrorCode.CONNECTION_ERROR,
            "the connection resumed another session",
            null);
    onTransportClosed();
  }

  // ---------------------------------------------------------------- closing

  /** The peer sent ERROR[CONNECTION_CLOSE]. */
  void peerAskedToClose(String message) {
    peerAskedToClose = true;
    switch (state) {
      case OPEN:
      case ACCEPTING:
        enterDraining(
            new CloseReason(
                CloseReason.Kind.CLOSED_BY_PEER, ErrorCode.CONNECTION_CLOSE, message, null),
            false);
        return;
      case DRAINING:
        maybeFinishDrain(); // both sides asked: neither waits for the other's end of stream
        return;
      default:
    }
  }

  private void enterDraining(CloseReason reason, boolean initiatedHere) {
    closeReason = reason;
    drainInitiatedHere = initiatedHere;
    setState(DRAINING);
    flusher.flushNow();
    timers.schedule(deadline, timers.nanoTime() + config.drainTimeout().toNanos());
    notifyListeners(l -> l.onDraining(this, reason));
    maybeFinishDrain();
  }

  /** A KEEPALIVE answer arrived: the drain barrier if this side is waiting for it. */
  void keepAliveAnswered(ByteBuf data) {
    if (state == DRAINING
        && drainInitiatedHere
        && !drainBarrierPassed
        && data.equals(DRAIN_BARRIER)) {
      drainBarrierPassed = true;
      maybeFinishDrain();
    }
  }

  /**
   * Ends a drain once it can: no stream is open, and, if this side asked to close, the peer has
   * seen the CONNECTION_CLOSE (it answered the barrier KEEPALIVE, closed its side or asked to close
   * too), so that requests it sent before it knew are answered rather than lost.
   */
  private void maybeFinishDrain() {
    if (state != DRAINING || !streams.isEmpty()) {
      return;
    }
    if (drainInitiatedHere && !peerAskedToClose && !peerInputClosed && !drainBarrierPassed) {
      return;
    }
    long left = Math.max(0, deadline.deadlineNanos - timers.nanoTime());
    flusher.flushNow();
    enterClosed();
    transport.closeGracefully(TimeUnit.NANOSECONDS.toMillis(left));
  }

  /** The setup timeout (before OPEN) or the drain timeout (while draining). */
  private final class DeadlineTimeout extends Timeout {
    @Override
    void expire(long nowNanos) {
      int s = state;
      if (s == AWAITING_SETUP || s == ACCEPTING) {
        LOG.log(Level.DEBUG, "no SETUP accepted from {0} in time; closing", remoteAddress());
        terminate(
            CloseReason.Kind.ERROR_SENT,
            ErrorCode.INVALID_SETUP,
            "no SETUP within " + config.setupTimeout(),
            true);
      } else if (s == DRAINING) {
        closeReason =
            new CloseReason(
                CloseReason.Kind.DRAIN_TIMEOUT,
                closeReason.errorCode(),
                "graceful close did not finish within " + config.drainTimeout(),
                null);
        flusher.flushNow();
        enterClosed();
        transport.close();
      }
    }
  }

  private final class KeepAliveOwner implements KeepAlive.Owner {
    @Override
    public void sendKeepAlive() {
      writer.keepAlive(true, null);
    }

    @Override
    public void keepAliveTimedOut(long silentMillis, long maxLifetimeMillis) {
      String why =
          "no frame from the peer for "
              + silentMillis
              + " ms (max lifetime "
              + maxLifetimeMillis
              + " ms)";
      if (session != null && session.isResumable()) {
        session.connectionLost(why); // the session lives on and waits for a new connection
        return;
      }
      terminate(CloseReason.Kind.KEEPALIVE_TIMEOUT, ErrorCode.CONNECTION_ERROR, why, true);
    }
  }

  /**
   * Closes the connection now, optionally telling the peer why on stream 0; the transport closes
   * once that ERROR has reached the socket (bounded).
   */
  void terminate(CloseReason.Kind kind, int code, String message, boolean sendError) {
    if (state == CLOSED) {
      return;
    }
    closeReason = new CloseReason(kind, code, message, null);
    if (sendError) {
      writer.error(0, code, message);
    }
    flusher.flushNow();
    enterClosed();
    transport.closeGracefully(Math.min(ERROR_LINGER_MILLIS, config.drainTimeout().toMillis()));
  }

  void protocolViolation(String message) {
    LOG.log(Level.DEBUG, "protocol violation by {0}: {1}", remoteAddress(), message);
    terminate(CloseReason.Kind.ERROR_SENT, ErrorCode.CONNECTION_ERROR, message, true);
  }

  /** The peer sent an ERROR on stream 0 that ends the connection. */
  void errorFromPeer(int code, String message) {
    terminate(CloseReason.Kind.ERROR_FROM_PEER, code, message, false);
  }

  /** Enters CLOSED: timers stop, open streams fail with the close reason. Idempotent. */
  private void enterClosed() {
    enterClosed(closeCode(), closeMessage());
  }

  /** Enters CLOSED, failing open streams with {@code code} and {@code message}. */
  private void enterClosed(int code, String message) {
    if (state == CLOSED) {
      return;
    }
    setState(CLOSED);
    keepAlive.stop();
    timers.cancel(deadline);
    timers.cancel(leaseExpiry);
    writer.discard();
    if (!streams.isEmpty()) {
      for (DefaultStream stream : streams.removeAll()) {
        stream.onError(code, message);
      }
    }
    calls.releaseWaitersIfReady();
  }

  /** Calls every connection listener, each failure logged without stopping the others. */
  private void notifyListeners(java.util.function.Consumer<ConnectionListener> event) {
    for (ConnectionListener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        logCallbackFailure("connection listener", e);
      }
    }
  }

  private void setState(int newState) {
    state = newState;
    publishedState = newState;
    publishAvailability();
  }

  private static void release(ByteBuf buf) {
    if (buf != null) {
      buf.release();
    }
  }

  @Override
  public String toString() {
    if (session != null && session.isResumable()) {
      return "Connection["
          + (client ? "client" : "server")
          + " "
          + remoteAddress()
          + " "
          + session
          + " suspensions="
          + readSuspensions
          + " state="
          + state
          + "]";
    }
    return "Connection[" + (client ? "client" : "server") + " " + remoteAddress() + "]";
  }
}
