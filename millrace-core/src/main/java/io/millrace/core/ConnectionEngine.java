package io.millrace.core;

import io.millrace.frame.ErrorCode;
import io.millrace.frame.FrameFormatException;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameListener;
import io.millrace.frame.FrameReader;
import io.millrace.frame.FrameType;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The RSocket connection state machine, for the client and the server role alike.
 *
 * <p>Design. One engine per connection, confined to the transport's event loop: every frame, timer
 * and API call runs there, so stream state needs no locks or atomics, and the per-message path is a
 * switch on the frame type, a primitive-keyed map lookup and a listener call. Calls from other
 * threads become one task each on the loop.
 *
 * <p>States: a server starts in {@code AWAITING_SETUP} (a timer closes the connection if SETUP does
 * not arrive in time, and anything but SETUP is INVALID_SETUP); a client sends SETUP and starts in
 * {@code OPEN}. {@code DRAINING} follows a CONNECTION_CLOSE in either direction: no new requests
 * either way, open streams finish, then the transport closes. {@code CLOSED} is final. Resumption
 * will add a state between a lost transport and {@code CLOSED}; stream state is already independent
 * of the transport object for that reason.
 *
 * <p>Writes are never flushed one by one: frames written while reading are flushed once when the
 * transport reports the end of its read batch ({@link #onReadComplete}); frames written at other
 * times (timers, calls from other threads) schedule one flush task, which coalesces every write
 * queued before it runs.
 *
 * <p>Backpressure: producers see {@link Stream#isReady()} turn false while the transport is not
 * writable and get {@link StreamListener#onReady} when it drains. When more than {@link
 * ConnectionConfig#maxQueuedBytes()} wait for a peer that does not read, the engine stops reading
 * from that peer until it catches up, so a peer cannot make this side buffer without bound.
 *
 * <p>Inbound buffers: the transport passes each frame in and releases it after {@link #onFrame}
 * returns; listeners get slices valid during their call (see {@link StreamListener}).
 */
public final class ConnectionEngine implements Connection {
  private static final System.Logger LOG = System.getLogger(ConnectionEngine.class.getName());

  private static final int AWAITING_SETUP = 0;
  private static final int OPEN = 1;
  private static final int DRAINING = 2;
  private static final int CLOSED = 3;

  /** Writes after which a batch is flushed even before it ends (as Netty's FlushConsolidation). */
  static final int FLUSH_EVERY_WRITES = 256;

  private final Transport transport;
  private final EventExecutor executor;
  private final ConnectionConfig config;
  private final boolean client;
  private final Acceptor acceptor;
  private final FrameWriter writer;
  private final Inbound inbound = new Inbound();
  private final IntObjectHashMap<DefaultStream> streams = new IntObjectHashMap<>();
  private final StreamQueue writableWaiters = new StreamQueue();
  private final Promise<Void> closePromise;
  private final Runnable flushTask = this::flushNow;
  private final TokenBucket keepAliveBucket;
  private final TokenBucket metadataPushBucket;

  private Responder responder;
  private volatile int state;
  private int nextStreamId;
  private boolean idsWrapped;
  private int peerStreams;
  private String metadataMimeType;
  private String dataMimeType;
  private boolean reading;

  /** Client: a frame other than ERROR has come from the server, so SETUP was accepted. */
  private boolean establishedWithPeer;

  private boolean dirty;
  private int unflushedWrites;
  private boolean flushScheduled;
  private boolean readingPaused;
  private boolean receivedSinceTick = true;
  private long lastReceivedNanos;
  private long maxLifetimeNanos;
  private ScheduledFuture<?> ticker;
  private ScheduledFuture<?> setupTimer;
  private long reassemblyBytes;
  private int closeCode = ErrorCode.CONNECTION_ERROR;
  private String closeMessage = "connection closed";

  private boolean leaseEnabled;
  private int requesterLeaseLeft;
  private long requesterLeaseExpiry;
  private int responderLeaseLeft;
  private long responderLeaseExpiry;

  private ConnectionEngine(
      Transport transport,
      ConnectionConfig config,
      boolean client,
      Responder responder,
      Acceptor acceptor) {
    this.transport = transport;
    this.executor = transport.executor();
    this.config = config;
    this.client = client;
    this.responder = responder;
    this.acceptor = acceptor;
    this.writer = new FrameWriter(transport, config, this);
    this.closePromise = executor.newPromise();
    this.nextStreamId = client ? 1 : 2;
    long now = System.nanoTime();
    this.lastReceivedNanos = now;
    this.keepAliveBucket = new TokenBucket(config.maxInboundKeepAlivesPerSecond(), now);
    this.metadataPushBucket = new TokenBucket(config.maxInboundMetadataPushesPerSecond(), now);
  }

  /**
   * Creates the client side of a connection. Call {@link #start} on the event loop once the
   * transport is connected; it sends SETUP with {@code setupMetadata} and {@code setupData} (both
   * nullable, ownership taken).
   */
  public static ConnectionEngine client(
      Transport transport, ConnectionConfig config, Responder responder) {
    return new ConnectionEngine(
        transport, config, true, responder == null ? Responder.REJECT_ALL : responder, null);
  }

  /** Creates the server side of an accepted connection; {@link #start} arms the setup timer. */
  public static ConnectionEngine server(
      Transport transport, ConnectionConfig config, Acceptor acceptor) {
    return new ConnectionEngine(transport, config, false, null, acceptor);
  }

  // ---------------------------------------------------------------- transport-facing

  /** Client: sends SETUP. Server: starts waiting for it. Event loop only; call once. */
  public void start(ByteBuf setupMetadata, ByteBuf setupData) {
    checkInEventLoop();
    if (client) {
      metadataMimeType = config.metadataMimeType();
      dataMimeType = config.dataMimeType();
      leaseEnabled = config.lease();
      state = OPEN;
      try {
        writer.write(
            SetupFrame.encode(
                writer.alloc(),
                writer.headroom(),
                leaseEnabled,
                (int) config.keepAliveInterval().toMillis(),
                (int) config.maxLifetime().toMillis(),
                null,
                metadataMimeType,
                dataMimeType,
                setupMetadata,
                setupData));
      } finally {
        DefaultStream.release(setupMetadata, setupData);
      }
      startKeepAlive(config.keepAliveInterval().toMillis(), config.maxLifetime().toMillis());
      if (leaseEnabled && config.leaseIssuer() != null) {
        startLeaseIssuer();
      }
      flushNow();
    } else {
      DefaultStream.release(setupMetadata, setupData);
      state = AWAITING_SETUP;
      setupTimer =
          executor.schedule(
              this::setupTimedOut, config.setupTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * One inbound frame without its length prefix. The caller keeps ownership and releases it after
   * this returns. Event loop only.
   */
  public void onFrame(ByteBuf frame) {
    reading = true;
    receivedSinceTick = true;
    if (state == CLOSED) {
      return;
    }
    if (!establishedWithPeer
        && client
        && frame.readableBytes() >= FrameHeader.SIZE
        && FrameHeader.type(frame) != FrameType.ERROR) {
      establishedWithPeer = true;
    }
    try {
      if (state == AWAITING_SETUP) {
        int type =
            frame.readableBytes() >= FrameHeader.SIZE
                ? FrameHeader.type(frame)
                : FrameType.RESERVED;
        if (type == FrameType.RESUME) {
          terminate(ErrorCode.REJECTED_RESUME, "resumption is not supported", true);
          return;
        }
        if (type != FrameType.SETUP) {
          terminate(
              ErrorCode.INVALID_SETUP,
              "expected SETUP as the first frame, got " + FrameType.name(type),
              true);
          return;
        }
      }
      FrameReader.read(frame, inbound);
    } catch (FrameFormatException e) {
      int code = state == AWAITING_SETUP ? ErrorCode.INVALID_SETUP : ErrorCode.CONNECTION_ERROR;
      LOG.log(
          Level.DEBUG, "malformed frame from {0}: {1}", transport.peerAddress(), e.getMessage());
      terminate(code, e.getMessage(), true);
    }
  }

  /**
   * The transport read a frame longer than {@link ConnectionConfig#maxFrameLength()}; the engine
   * closes the connection with CONNECTION_ERROR.
   */
  public void onFrameTooLong(long length) {
    terminate(
        ErrorCode.CONNECTION_ERROR,
        "frame of " + length + " bytes exceeds the limit of " + config.maxFrameLength(),
        true);
  }

  /** The transport finished a batch of reads: flush what the batch produced. */
  public void onReadComplete() {
    reading = false;
    flushNow();
    if (!readingPaused
        && state != CLOSED
        && !transport.isWritable()
        && transport.queuedBytes() > config.maxQueuedBytes()) {
      readingPaused = true;
      transport.setReading(false);
      LOG.log(
          Level.DEBUG,
          "{0} is not reading: pausing reads with {1} bytes queued",
          transport.peerAddress(),
          transport.queuedBytes());
    }
  }

  /** The transport's writability changed. */
  public void onWritabilityChanged() {
    if (!transport.isWritable() || state == CLOSED) {
      return;
    }
    if (readingPaused) {
      readingPaused = false;
      transport.setReading(true);
    }
    // First come, first served: each waiting producer gets onReady in the order it found the
    // transport full, until the transport fills again; producers still waiting then keep their
    // place, and one that fills it again goes to the back. No producer starves and nothing is
    // allocated.
    DefaultStream stream;
    while ((stream = writableWaiters.poll()) != null) {
      stream.notifyReady();
      if (!transport.isWritable()) {
        break;
      }
    }
  }

  /**
   * Called by a stream whose producer was told to wait because the transport is not writable: it
   * gets {@code onReady} when the transport drains, in turn.
   */
  void awaitWritable(DefaultStream stream) {
    writableWaiters.add(stream);
  }

  /** The transport closed; {@code cause} is null for an orderly close. */
  public void onTransportClosed(Throwable cause) {
    if (state == CLOSED && closePromise.isDone()) {
      return;
    }
    state = CLOSED;
    cancelTimers();
    writer.discard();
    failAllStreams(closeCode, closeMessage);
    if (cause == null) {
      closePromise.trySuccess(null);
    } else {
      closePromise.tryFailure(cause);
    }
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

  @Override
  public String metadataMimeType() {
    return metadataMimeType;
  }

  @Override
  public String dataMimeType() {
    return dataMimeType;
  }

  @Override
  public boolean isWritable() {
    return transport.isWritable();
  }

  /** Event loop only (the stream map is not thread-safe). */
  @Override
  public int activeStreams() {
    return streams.size();
  }

  @Override
  public boolean isOpen() {
    return state != CLOSED;
  }

  @Override
  public Future<Void> onClose() {
    return closePromise;
  }

  @Override
  public void fireAndForget(ByteBuf metadata, ByteBuf data) {
    if (!executor.inEventLoop()) {
      executor.execute(() -> fireAndForget(metadata, data));
      return;
    }
    String refusal = refuseRequest();
    if (refusal != null) {
      DefaultStream.release(metadata, data);
      LOG.log(Level.DEBUG, "fire-and-forget dropped: {0}", refusal);
      return;
    }
    int id = allocateStreamId();
    try {
      writer.request(FrameType.REQUEST_FNF, id, 0, false, metadata, data);
    } catch (RuntimeException e) {
      throw unusableBuffer("fire-and-forget", e);
    }
  }

  @Override
  public void metadataPush(ByteBuf metadata) {
    if (!executor.inEventLoop()) {
      executor.execute(() -> metadataPush(metadata));
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
    if (!leaseEnabled && state != AWAITING_SETUP) {
      if (metadata != null) {
        metadata.release();
      }
      throw new IllegalStateException("leases were not negotiated on this connection");
    }
    if (!executor.inEventLoop()) {
      executor.execute(() -> sendLease(ttlMillis, numberOfRequests, metadata));
      return;
    }
    if (!leaseEnabled || state == CLOSED) {
      if (metadata != null) {
        metadata.release();
      }
      if (!leaseEnabled) {
        throw new IllegalStateException("leases were not negotiated on this connection");
      }
      return;
    }
    responderLeaseLeft = numberOfRequests;
    responderLeaseExpiry = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    writer.lease(ttlMillis, numberOfRequests, metadata);
  }

  @Override
  public void close() {
    if (!executor.inEventLoop()) {
      executor.execute(this::close);
      return;
    }
    if (state == CLOSED || state == DRAINING) {
      return;
    }
    if (state == AWAITING_SETUP) {
      transport.close();
      return;
    }
    state = DRAINING;
    closeCode = ErrorCode.CONNECTION_CLOSE;
    closeMessage = "connection closed by this side";
    writer.error(0, ErrorCode.CONNECTION_CLOSE, "closing");
    flushNow();
    if (streams.isEmpty()) {
      transport.close();
    }
  }

  @Override
  public void dispose() {
    if (!executor.inEventLoop()) {
      executor.execute(this::dispose);
      return;
    }
    if (state != CLOSED) {
      closeCode = ErrorCode.CANCELED;
      closeMessage = "connection disposed";
      flushNow();
      transport.close();
    }
  }

  // ---------------------------------------------------------------- package-private helpers

  FrameWriter writer() {
    return writer;
  }

  boolean transportWritable() {
    return transport.isWritable();
  }

  void checkInEventLoop() {
    if (!executor.inEventLoop()) {
      throw new IllegalStateException(
          "stream methods must be called on the connection's event loop: use"
              + " connection.executor().execute(...)");
    }
  }

  /**
   * Called by {@link FrameWriter} after every write. Within a long read batch, flushes every {@link
   * #FLUSH_EVERY_WRITES} writes so that the peer can start on the first frames while this side
   * produces the rest: without it two busy peers fall into lockstep, each idle while the other
   * works through one large batch (measured: request-channel ran both sides at 60% CPU).
   */
  void onWritten() {
    dirty = true;
    if (++unflushedWrites >= FLUSH_EVERY_WRITES) {
      flushNow();
    } else if (!reading && !flushScheduled) {
      flushScheduled = true;
      executor.execute(flushTask);
    }
  }

  void remove(DefaultStream stream) {
    writableWaiters.remove(stream);
    if (stream.id != 0 && streams.remove(stream.id) != null) {
      if (!stream.requester) {
        peerStreams--;
      }
      if (state == DRAINING && streams.isEmpty()) {
        flushNow();
        transport.close();
      }
    }
  }

  void listenerFailed(DefaultStream stream, RuntimeException e) {
    logListenerFailure(stream, e);
    if (stream.requester && stream.kind != DefaultStream.REQUEST_CHANNEL) {
      stream.cancel();
    } else {
      stream.error(ErrorCode.APPLICATION_ERROR, handlerFailureMessage("the handler failed", e));
    }
  }

  /**
   * What the peer is told when application code threw: a fixed text, since an exception's message
   * may carry internals (grpc-java sends none either); the message itself only when {@link
   * ConnectionConfig#errorMessagesFromHandlers()} is on.
   */
  private String handlerFailureMessage(String fixed, RuntimeException e) {
    return config.errorMessagesFromHandlers() ? String.valueOf(e.getMessage()) : fixed;
  }

  void logUnusableBuffer(DefaultStream stream, RuntimeException e) {
    LOG.log(Level.WARNING, "unusable payload buffer passed to " + stream, e);
  }

  /**
   * The exception a fire-and-forget or metadata push throws to its caller on the event loop when
   * its buffer cannot be encoded; nothing was written.
   */
  private static IllegalArgumentException unusableBuffer(String what, RuntimeException cause) {
    return new IllegalArgumentException(
        "the " + what + " payload buffer is unusable (released?); nothing was sent", cause);
  }

  void logListenerFailure(DefaultStream stream, RuntimeException e) {
    LOG.log(Level.WARNING, "listener of " + stream + " threw", e);
  }

  // ---------------------------------------------------------------- internals

  private void flushNow() {
    flushScheduled = false;
    if (dirty) {
      dirty = false;
      unflushedWrites = 0;
      writer.handOver();
      transport.flush();
    }
  }

  private static void checkRequestN(long n, ByteBuf metadata, ByteBuf data) {
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
      executor.execute(() -> startRequest(stream, type, metadata, data, initialRequestN, complete));
      return;
    }
    String refusal = refuseRequest();
    if (refusal != null) {
      DefaultStream.release(metadata, data);
      stream.failLocally(refusalCode(), refusal);
      return;
    }
    stream.id = allocateStreamId();
    stream.inboundCredit = initialRequestN >= Integer.MAX_VALUE ? Long.MAX_VALUE : initialRequestN;
    stream.outboundDone = stream.kind != DefaultStream.REQUEST_CHANNEL || complete;
    streams.put(stream.id, stream);
    try {
      writer.request(type, stream.id, initialRequestN, complete, metadata, data);
    } catch (RuntimeException e) {
      // Nothing of the request was written: only this call fails.
      streams.remove(stream.id);
      logUnusableBuffer(stream, e);
      stream.failLocally(ErrorCode.INVALID, "the request's payload buffer is unusable: " + e);
    }
  }

  /** Why a new request cannot go out now, or null when it can. Consumes a unit of lease. */
  private String refuseRequest() {
    if (state == CLOSED) {
      return closeMessage;
    }
    if (state == DRAINING) {
      return "the connection is closing";
    }
    if (state == AWAITING_SETUP) {
      return "the connection is not set up yet";
    }
    if (leaseEnabled) {
      if (requesterLeaseLeft <= 0 || System.nanoTime() - requesterLeaseExpiry > 0) {
        return "no lease from the peer allows this request";
      }
      requesterLeaseLeft--;
    }
    return null;
  }

  private int refusalCode() {
    return state == CLOSED ? closeCode : ErrorCode.REJECTED;
  }

  /**
   * The next stream id of this side's parity. After 2^31-1 the ids wrap around to the first one
   * again, as the spec allows, skipping ids of this side's streams that are still open: a
   * connection never runs out of ids (at 8 M requests a second it would after about 4.5 minutes).
   * Until the first wrap no id can be in use, so the common path is an add.
   */
  private int allocateStreamId() {
    int id = nextStreamId;
    if (idsWrapped) {
      for (int tries = streams.size(); tries >= 0 && streams.containsKey(id); tries--) {
        id = followingStreamId(id);
      }
    }
    nextStreamId = followingStreamId(id);
    return id;
  }

  private int followingStreamId(int id) {
    int next = id + 2;
    if (next < 0) { // past 2^31-1
      idsWrapped = true;
      return client ? 1 : 2;
    }
    return next;
  }

  /** Test hook: the id the next request will try, to reach the wrap-around quickly. */
  void nextStreamIdForTest(int id) {
    checkInEventLoop();
    if ((id & 1) != (client ? 1 : 0) || id <= 0) {
      throw new IllegalArgumentException("not an id of this side: " + id);
    }
    nextStreamId = id;
  }

  private void startKeepAlive(long intervalMillis, long maxLifetimeMillis) {
    maxLifetimeNanos = TimeUnit.MILLISECONDS.toNanos(maxLifetimeMillis);
    lastReceivedNanos = System.nanoTime();
    ticker =
        executor.scheduleAtFixedRate(
            this::tick, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
  }

  private void tick() {
    if (state == CLOSED) {
      return;
    }
    long now = System.nanoTime();
    if (receivedSinceTick) {
      receivedSinceTick = false;
      lastReceivedNanos = now;
    } else if (now - lastReceivedNanos > maxLifetimeNanos) {
      terminate(
          ErrorCode.CONNECTION_ERROR,
          "no frame from the peer for "
              + TimeUnit.NANOSECONDS.toMillis(now - lastReceivedNanos)
              + " ms (max lifetime "
              + TimeUnit.NANOSECONDS.toMillis(maxLifetimeNanos)
              + " ms)",
          true);
      return;
    }
    if (client) {
      writer.keepAlive(true, null);
      flushNow();
    }
  }

  private void setupTimedOut() {
    if (state == AWAITING_SETUP) {
      LOG.log(Level.DEBUG, "no SETUP from {0} in time; closing", transport.peerAddress());
      terminate(ErrorCode.INVALID_SETUP, "no SETUP within " + config.setupTimeout(), true);
    }
  }

  private void cancelTimers() {
    if (ticker != null) {
      ticker.cancel(false);
    }
    if (setupTimer != null) {
      setupTimer.cancel(false);
    }
  }

  /** Closes the connection at once, optionally telling the peer why on stream 0. */
  void terminate(int code, String message, boolean sendError) {
    if (state == CLOSED) {
      return;
    }
    closeCode = code;
    closeMessage = message;
    if (sendError) {
      writer.error(0, code, message);
      flushNow();
    }
    state = CLOSED;
    cancelTimers();
    failAllStreams(code, message);
    transport.close();
  }

  private void failAllStreams(int code, String message) {
    if (streams.isEmpty()) {
      return;
    }
    ArrayList<DefaultStream> open = new ArrayList<>(streams.values());
    for (DefaultStream stream : open) {
      stream.onError(code, message);
    }
    streams.clear();
    peerStreams = 0;
  }

  private void protocolViolation(String message) {
    LOG.log(Level.DEBUG, "protocol violation by {0}: {1}", transport.peerAddress(), message);
    terminate(ErrorCode.CONNECTION_ERROR, message, true);
  }

  private boolean isPeerStreamId(int streamId) {
    return (streamId & 1) == (client ? 0 : 1);
  }

  // ---------------------------------------------------------------- inbound frames

  private void handleSetup(
      int flags,
      int major,
      int keepAlive,
      int maxLifetime,
      String metadataMime,
      String dataMime,
      ByteBuf metadata,
      ByteBuf data) {
    if (client || state != AWAITING_SETUP) {
      return; // a client ignores SETUP, a server a second one (spec: handling the unexpected)
    }
    setupTimer.cancel(false);
    if (major != 1) {
      terminate(ErrorCode.UNSUPPORTED_SETUP, "unsupported protocol version " + major, true);
      return;
    }
    if ((flags & FrameHeader.FLAG_RESUME) != 0) {
      terminate(ErrorCode.UNSUPPORTED_SETUP, "resumption is not supported", true);
      return;
    }
    if (keepAlive <= 0 || maxLifetime <= 0) {
      terminate(
          ErrorCode.INVALID_SETUP, "keepalive interval and max lifetime must be positive", true);
      return;
    }
    long silenceAllowed = Math.min(maxLifetime, config.maxLifetime().toMillis());
    if (keepAlive >= silenceAllowed) {
      // The connection would be closed as silent between two of the client's KEEPALIVEs.
      terminate(
          ErrorCode.UNSUPPORTED_SETUP,
          "keepalive interval "
              + keepAlive
              + " ms is not below the max lifetime of "
              + silenceAllowed
              + " ms that this server allows",
          true);
      return;
    }
    boolean lease = (flags & FrameHeader.FLAG_LEASE) != 0;
    if (lease && config.leaseIssuer() == null) {
      terminate(ErrorCode.UNSUPPORTED_SETUP, "leases are not supported by this server", true);
      return;
    }
    metadataMimeType = metadataMime;
    dataMimeType = dataMime;
    leaseEnabled = lease;
    Responder accepted;
    try {
      accepted =
          acceptor.accept(
              new ConnectionSetup(
                  metadataMime, dataMime, keepAlive, maxLifetime, lease, metadata, data),
              this);
    } catch (SetupException e) {
      terminate(e.errorCode(), e.getMessage(), true);
      return;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "acceptor threw", e);
      terminate(ErrorCode.REJECTED_SETUP, handlerFailureMessage("the acceptor failed", e), true);
      return;
    }
    if (accepted == null) {
      terminate(ErrorCode.REJECTED_SETUP, "rejected by the server", true);
      return;
    }
    responder = accepted;
    state = OPEN;
    // The peer's numbers are not trusted: the liveness check runs every 100 ms to 1 s, and
    // silence is tolerated for at most this server's own max lifetime.
    startKeepAlive(
        Math.max(100, Math.min(keepAlive, 1000)),
        Math.min(maxLifetime, config.maxLifetime().toMillis()));
    if (lease) {
      startLeaseIssuer();
    }
  }

  private void startLeaseIssuer() {
    try {
      config.leaseIssuer().onConnected(this);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "lease issuer threw", e);
      terminate(ErrorCode.CONNECTION_ERROR, "lease issuer failed", true);
    }
  }

  private void handleRequest(
      int type, int streamId, int flags, int initialRequestN, ByteBuf metadata, ByteBuf data) {
    if (!isPeerStreamId(streamId)) {
      protocolViolation("request on stream " + streamId + " of this side's parity");
      return;
    }
    if (streams.containsKey(streamId)) {
      return; // a request on an id in use is ignored (spec)
    }
    boolean fragmented = (flags & FrameHeader.FLAG_FOLLOWS) != 0;
    if (type == FrameType.REQUEST_FNF && !fragmented) {
      if (state == OPEN && takeResponderLease()) {
        try {
          responder.fireAndForget(this, metadata, data);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "fire-and-forget handler threw", e);
        }
      }
      return;
    }
    if (state != OPEN) {
      if (type != FrameType.REQUEST_FNF) {
        writer.error(streamId, ErrorCode.REJECTED, "the connection is closing");
      }
      return;
    }
    if (peerStreams >= config.maxConcurrentStreams()) {
      writer.error(
          streamId,
          ErrorCode.REJECTED,
          "too many concurrent streams (limit " + config.maxConcurrentStreams() + ")");
      return;
    }
    if (!takeResponderLease()) {
      writer.error(streamId, ErrorCode.REJECTED, "request exceeds the lease");
      return;
    }
    DefaultStream stream = new DefaultStream(this, kindOf(type), false, null);
    stream.id = streamId;
    streams.put(streamId, stream);
    peerStreams++;
    if (fragmented) {
      stream.reassembly = new Reassembly(alloc(), type, flags, initialRequestN);
      addFragment(stream.reassembly, metadata, data);
      return;
    }
    dispatchRequest(stream, type, flags, initialRequestN, metadata, data);
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

  private boolean takeResponderLease() {
    if (!leaseEnabled) {
      return true;
    }
    if (responderLeaseLeft <= 0 || System.nanoTime() - responderLeaseExpiry > 0) {
      return false;
    }
    responderLeaseLeft--;
    return true;
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
          stream.inboundDone = true;
          listener = responder.requestResponse(stream, metadata, data);
          break;
        case FrameType.REQUEST_STREAM:
          stream.addOutboundCredit(initialRequestN);
          stream.inboundDone = true;
          listener = responder.requestStream(stream, metadata, data);
          break;
        case FrameType.REQUEST_CHANNEL:
          stream.addOutboundCredit(initialRequestN);
          boolean complete = (flags & FrameHeader.FLAG_COMPLETE) != 0;
          if (complete) {
            stream.markInboundComplete();
          }
          listener = responder.requestChannel(stream, metadata, data, complete);
          break;
        default:
          // A reassembled fire-and-forget.
          stream.outboundDone = true;
          stream.inboundDone = true;
          remove(stream);
          responder.fireAndForget(this, metadata, data);
          return;
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "responder threw", e);
      stream.error(ErrorCode.APPLICATION_ERROR, handlerFailureMessage("the handler failed", e));
      return;
    }
    if (listener != null) {
      stream.listener = listener;
      stream.notifyReady();
    }
  }

  private void handlePayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
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
          protocolViolation("payload beyond the credit granted on stream " + streamId);
        }
        return;
      }
      if (stream.inboundDone) {
        return; // nothing is expected on this half: not buffered
      }
      if ((flags & FrameHeader.FLAG_NEXT) == 0) {
        protocolViolation("first fragment without NEXT on stream " + streamId);
        return;
      }
      if (!stream.takeInboundCredit()) {
        protocolViolation("payload beyond the credit granted on stream " + streamId);
        return;
      }
      stream.reassembly = new Reassembly(alloc(), FrameType.PAYLOAD, flags, 0);
      addFragment(stream.reassembly, metadata, data);
      return;
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
      releaseReassembly(reassembly);
    }
  }

  /**
   * Adds a fragment, charging it to the message and to the connection; on a breach closes the
   * connection with CONNECTION_ERROR and returns false.
   */
  private boolean addFragment(Reassembly reassembly, ByteBuf metadata, ByteBuf data) {
    long before = reassembly.charged();
    int status = reassembly.add(metadata, data, config.maxReassembledLength());
    if (status == Reassembly.METADATA_AFTER_DATA) {
      protocolViolation("fragment with metadata after data");
      return false;
    }
    if (status == Reassembly.TOO_LONG) {
      protocolViolation(
          "fragmented message exceeds the limit of " + config.maxReassembledLength() + " bytes");
      return false;
    }
    reassemblyBytes += reassembly.charged() - before;
    if (reassemblyBytes > config.maxReassemblyBytesPerConnection()) {
      protocolViolation(
          "fragmented messages in progress exceed the connection's limit of "
              + config.maxReassemblyBytesPerConnection()
              + " bytes");
      return false;
    }
    return true;
  }

  /** Releases a reassembly and takes its bytes off the connection's total. */
  void releaseReassembly(Reassembly reassembly) {
    reassemblyBytes -= reassembly.charged();
    reassembly.release();
  }

  private void handleError(int streamId, int code, String message) {
    if (streamId == 0) {
      if (code >= ErrorCode.INVALID_SETUP
          && code <= ErrorCode.REJECTED_RESUME
          && (!client || establishedWithPeer)) {
        // Setup errors mean nothing to a server, nor to a client that has heard from the server
        // (spec: handling the unexpected).
        return;
      }
      if (code == ErrorCode.CONNECTION_CLOSE) {
        if (state == OPEN || state == AWAITING_SETUP) {
          state = DRAINING;
          closeCode = ErrorCode.CONNECTION_CLOSE;
          closeMessage = message;
          if (streams.isEmpty()) {
            flushNow();
            transport.close();
          }
        }
        return;
      }
      terminate(code, message, false);
      return;
    }
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.onError(code, message);
    }
  }

  /**
   * A frame the peer says must not be ignored but this side does not understand. The spec leaves
   * the answer open; Millrace fails as little as it can: the stream concerned with ERROR[INVALID],
   * a frame for no live stream is dropped (as for any unknown stream), and only one on stream 0
   * ends the connection with CONNECTION_ERROR.
   */
  private void unsupportedFrame(int streamId, String what) {
    if (streamId == 0) {
      protocolViolation("unsupported " + what + " without the ignore flag");
      return;
    }
    DefaultStream stream = streams.get(streamId);
    if (stream != null) {
      stream.failBothWays(ErrorCode.INVALID, "unsupported " + what);
    }
  }

  /**
   * Answers a KEEPALIVE that asks for it. Only those count against the rate limit: they are what
   * makes this side write, and replies to this side's own KEEPALIVEs come at the rate this side
   * chose (counting them closed a healthy client that pinged rsocket-java every 50 ms).
   */
  private void handleKeepAlive(boolean respond, ByteBuf data) {
    if (!respond) {
      return;
    }
    if (!keepAliveBucket.tryAcquire(System.nanoTime())) {
      protocolViolation(
          "more than "
              + config.maxInboundKeepAlivesPerSecond()
              + " KEEPALIVE frames asking for a reply a second");
      return;
    }
    writer.keepAlive(false, data);
  }

  private void handleMetadataPush(ByteBuf metadata) {
    if (!metadataPushBucket.tryAcquire(System.nanoTime())) {
      protocolViolation(
          "more than "
              + config.maxInboundMetadataPushesPerSecond()
              + " METADATA_PUSH frames a second");
      return;
    }
    if (state != OPEN && state != DRAINING) {
      return;
    }
    try {
      responder.metadataPush(this, metadata);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "metadata-push handler threw", e);
    }
  }

  private void handleLease(int ttlMillis, int numberOfRequests) {
    if (!leaseEnabled) {
      return;
    }
    requesterLeaseLeft = numberOfRequests;
    requesterLeaseExpiry = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
  }

  /** Dispatches decoded frames; a separate object so the listener methods stay off the API. */
  private final class Inbound implements FrameListener {
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
      handleSetup(
          flags,
          majorVersion,
          keepAliveIntervalMillis,
          maxLifetimeMillis,
          metadataMimeType,
          dataMimeType,
          metadata,
          data);
    }

    @Override
    public void onLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
      handleLease(ttlMillis, numberOfRequests);
    }

    @Override
    public void onKeepAlive(boolean respond, long lastReceivedPosition, ByteBuf data) {
      handleKeepAlive(respond, data);
    }

    @Override
    public void onRequest(
        int frameType,
        int streamId,
        int flags,
        int initialRequestN,
        ByteBuf metadata,
        ByteBuf data) {
      handleRequest(frameType, streamId, flags, initialRequestN, metadata, data);
    }

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
      handlePayload(streamId, flags, metadata, data);
    }

    @Override
    public void onError(int streamId, int errorCode, String message) {
      handleError(streamId, errorCode, message);
    }

    @Override
    public void onMetadataPush(ByteBuf metadata) {
      handleMetadataPush(metadata);
    }

    @Override
    public void onResume(
        int majorVersion,
        int minorVersion,
        ByteBuf token,
        long lastReceivedServerPosition,
        long firstAvailableClientPosition) {
      if (!client) {
        // RESUME as the first frame was answered in onFrame; after SETUP it is a connection error
        // (spec: "SHOULD send an ERROR[CONNECTION_ERROR]"). A client ignores it.
        protocolViolation("RESUME after SETUP");
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
  }
}
