package io.millrace.core.internal;

import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Reconnect;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.lang.System.Logger.Level;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A client {@link Connection} that makes a new connection whenever the one it has is lost (see
 * {@link Reconnect}). It forwards requests to the connection of the moment: while connected a call
 * costs one volatile read and two state checks more than on the connection itself. While there is
 * none, requests wait in order (bounded in bytes and in time) or fail at once, as configured.
 *
 * <p>Every connection it makes is on its one event loop ({@link #executor()}), so listeners and
 * streams keep one thread whatever happens to the connections. A stream returned while connected is
 * the underlying connection's own (its {@link Stream#connection()} is that connection); a request
 * that had to wait gets a stream of this class that becomes the real one once sent.
 *
 * <p>State is changed on the event loop only; the request methods and queries may be called from
 * any thread, as for any {@link Connection}.
 */
public final class ReconnectingConnection implements Connection {
  private static final System.Logger LOG = System.getLogger(ReconnectingConnection.class.getName());

  /** Bytes a waiting call counts for on top of its payload, so that empty calls are bounded. */
  private static final int CALL_OVERHEAD = 64;

  /** Opens one connection of a {@link ReconnectingConnection}. */
  public interface Connector {
    /**
     * Connects on {@code loop} and sends SETUP with the given metadata and data (nullable;
     * ownership taken), completing once SETUP is written (on any thread). Fails with {@link
     * RejectedExecutionException} when no connection will ever be made again (the client shut
     * down): reconnecting then stops.
     */
    CompletableFuture<Connection> connect(
        EventExecutor loop, ByteBuf setupMetadata, ByteBuf setupData);
  }

  private static final int CONNECTING = 0;
  private static final int CONNECTED = 1;
  private static final int CLOSING = 2;
  private static final int CLOSED = 3;

  private final EventExecutor executor;
  private final ByteBufAllocator alloc;
  private final ConnectionConfig config;
  private final Reconnect settings;
  private final Backoff backoff;
  private final Connector connector;
  private final Timers timers;
  private final CompletableFuture<Connection> firstConnection = new CompletableFuture<>();
  private final CompletableFuture<CloseReason> closeFuture = new CompletableFuture<>();
  private final List<ConnectionListener> listeners = new CopyOnWriteArrayList<>();

  /** The connection requests go to; null while there is none. Written on the loop. */
  private volatile Connection current;

  private volatile int state = CONNECTING;

  /** Payload bytes (plus overhead) of the calls waiting for a connection, counted at the call. */
  private final AtomicLong waitingBytes = new AtomicLong();

  // Loop only from here on.
  private ByteBuf setupMetadata;
  private ByteBuf setupData;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

  /** Callbacks of {@link #whenReadyForCalls}, run once this is ready for calls or closed. */
  private final List<Runnable> readyCallbacks = new ArrayList<>();

  /** The connection a readiness callback is registered on, if any. */
  private Connection readyArmedOn;

  /**
   * Whether waiting calls may go straight to the current connection: it is up and, with leases, the
   * server has granted the first one.
   */
  private boolean flowing;

  /** Calls cancelled while waiting that are still in {@link #waiting}. */
  private int cancelledWaiting;

  /** Connections this side is done with that have not closed yet (draining their streams). */
  private final List<Connection> retiring = new ArrayList<>();

  private int attempts;
  private boolean attemptInFlight;
  private long connectedAtNanos;
  private volatile String lastProblem = "";
  private SocketAddress remoteAddress;
  private SocketAddress localAddress;
  private CloseReason closingReason;

  private final Timeout retryTimer =
      new Timeout() {
        @Override
        void expire(long nowNanos) {
          attempt();
        }
      };

  private final Timeout waitTimer =
      new Timeout() {
        @Override
        void expire(long nowNanos) {
          expireWaiting(nowNanos);
        }
      };

  /**
   * A connection that is not connected yet: {@link #start()} makes the first one. The setup
   * metadata and data (nullable) are owned from here on and sent with every SETUP.
   */
  public ReconnectingConnection(
      EventExecutor executor,
      ByteBufAllocator alloc,
      ConnectionConfig config,
      Connector connector,
      ByteBuf setupMetadata,
      ByteBuf setupData) {
    this(executor, alloc, config, connector, setupMetadata, setupData, null);
  }

  ReconnectingConnection(
      EventExecutor executor,
      ByteBufAllocator alloc,
      ConnectionConfig config,
      Connector connector,
      ByteBuf setupMetadata,
      ByteBuf setupData,
      Timers timers) {
    if (config.reconnect() == null) {
      throw new IllegalArgumentException("the config has no Reconnect settings");
    }
    this.executor = executor;
    this.alloc = alloc;
    this.config = config;
    this.settings = config.reconnect();
    this.backoff = new Backoff(settings.minBackoff(), settings.maxBackoff(), settings.jitter());
    this.connector = connector;
    this.timers = timers == null ? new LoopTimers(executor) : timers;
    this.setupMetadata = setupMetadata;
    this.setupData = setupData;
  }

  /**
   * Makes the first connection, retrying as configured; completes with this connection once it is
   * made, or fails once reconnecting gives up. Any thread.
   */
  public CompletableFuture<Connection> start() {
    onLoop(this::attempt);
    return firstConnection.copy();
  }

  // ---------------------------------------------------------------- connecting

  private void attempt() {
    if (state >= CLOSING || attemptInFlight || current != null) {
      return;
    }
    attemptInFlight = true;
    attempts++;
    CompletableFuture<Connection> connecting;
    try {
      connecting = connector.connect(executor, retain(setupMetadata), retain(setupData));
    } catch (RuntimeException e) {
      connecting = CompletableFuture.failedFuture(e);
    }
    connecting.whenComplete(
        (connection, failure) ->
            onLoop(
                () -> {
                  attemptInFlight = false;
                  if (failure == null) {
                    connected(connection);
                  } else {
                    connectFailed(unwrap(failure));
                  }
                }));
  }

  private void connected(Connection connection) {
    if (state == CLOSED || state == CLOSING && closingReason.kind() == CloseReason.Kind.DISPOSED) {
      connection.dispose(); // closed while it was connecting: nobody will use it
      return;
    }
    if (state == CLOSING) {
      retiring.add(connection);
      watch(connection);
      connection.close();
      return;
    }
    connectedAtNanos = timers.nanoTime();
    remoteAddress = connection.remoteAddress();
    localAddress = connection.localAddress();
    current = connection;
    state = CONNECTED;
    watch(connection);
    if (current != connection) {
      return; // it closed at once
    }
    // With leases, what waited goes once the server has granted one (Forwarder.onLeaseGranted).
    if (!config.lease()) {
      startFlowing();
    }
    if (!firstConnection.isDone()) {
      firstConnection.complete(this);
    } else {
      LOG.log(Level.DEBUG, "reconnected to {0}", remoteAddress);
      notifyListeners(l -> l.onReconnected(this));
    }
    runReadyCallbacks();
  }

  /** Sends what waited, in order, before anything that comes after. */
  private void startFlowing() {
    if (state != CONNECTED || flowing) {
      return;
    }
    flowing = true;
    sendWaiting();
  }

  /** Forwards a connection's events and hears of its end. */
  private void watch(Connection connection) {
    connection.addListener(new Forwarder(connection));
    connection.onClose().thenAccept(reason -> onLoop(() -> ended(connection, reason)));
  }

  private void connectFailed(Throwable failure) {
    if (state >= CLOSING) {
      maybeClosed();
      return;
    }
    lastProblem = failure.getMessage() != null ? failure.getMessage() : failure.toString();
    if (failure instanceof RejectedExecutionException) {
      // The client is shutting down: this side is closing, not failing.
      closeNow(
          new CloseReason(
              CloseReason.Kind.CLOSED_BY_THIS_SIDE,
              ErrorCode.CONNECTION_CLOSE,
              "no more connections: " + lastProblem,
              null));
      return;
    }
    LOG.log(Level.DEBUG, "connecting failed: {0}", lastProblem);
    scheduleAttempt();
  }

  private void scheduleAttempt() {
    if (attempts >= settings.maxAttempts()) {
      giveUp(
          "gave up after "
              + attempts
              + (attempts == 1 ? " attempt" : " attempts")
              + (lastProblem.isEmpty() ? "" : ": " + lastProblem));
      return;
    }
    long delay = backoff.delayNanos(attempts);
    int attempt = attempts + 1;
    notifyListeners(l -> l.onReconnecting(this, attempt, TimeUnit.NANOSECONDS.toMillis(delay)));
    if (delay == 0) {
      executor.execute(this::attempt); // not on the timer wheel: its ticks are 50 ms
    } else {
      timers.schedule(retryTimer, timers.nanoTime() + delay);
    }
  }

  /** A connection closed: the current one is lost, or one this side was done with finished. */
  private void ended(Connection connection, CloseReason reason) {
    retiring.remove(connection);
    if (connection != current) {
      maybeClosed();
      return;
    }
    current = null;
    if (state >= CLOSING) {
      if (closingReason == null || closingReason.kind() == CloseReason.Kind.CLOSED_BY_THIS_SIDE) {
        closingReason = reason;
      }
      maybeClosed();
      return;
    }
    lost(reason);
    switch (reason.kind()) {
      case CLOSED_BY_THIS_SIDE:
      case DISPOSED:
        // The application closed the underlying connection itself: it wants no more.
        closeNow(reason);
        return;
      case ERROR_FROM_PEER:
        if (reason.errorCode() == ErrorCode.INVALID_SETUP
            || reason.errorCode() == ErrorCode.UNSUPPORTED_SETUP
            || reason.errorCode() == ErrorCode.REJECTED_SETUP) {
          closeNow(reason); // the same SETUP would be refused again
          return;
        }
        break;
      default:
        break;
    }
    notifyListeners(l -> l.onDisconnected(this, reason.toString()));
    scheduleAttempt();
  }

  /** The current connection stopped taking requests (lost, or the server is draining it). */
  private void lost(CloseReason reason) {
    state = CONNECTING;
    flowing = false;
    lastProblem = reason.toString();
    long upNanos = timers.nanoTime() - connectedAtNanos;
    if (upNanos >= settings.maxBackoff().toNanos()) {
      attempts = 0; // it was healthy: start again from an immediate attempt
    }
  }

  /** The server is closing the connection gracefully: its streams finish, a new one is made. */
  private void serverDraining(Connection connection, CloseReason reason) {
    if (connection != current || state != CONNECTED) {
      return;
    }
    current = null;
    retiring.add(connection);
    lost(reason);
    LOG.log(Level.DEBUG, "the server is closing {0}: connecting anew", remoteAddress);
    notifyListeners(l -> l.onDisconnected(this, reason.toString()));
    scheduleAttempt();
  }

  // ---------------------------------------------------------------- closing

  private void giveUp(String why) {
    LOG.log(Level.DEBUG, "reconnecting to {0} stopped: {1}", remoteAddress, why);
    closeNow(
        new CloseReason(CloseReason.Kind.RECONNECT_FAILED, ErrorCode.CONNECTION_ERROR, why, null));
  }

  /** Closes with no connection left to wait for but those retiring. */
  private void closeNow(CloseReason reason) {
    if (state == CLOSED) {
      return;
    }
    state = CLOSING;
    closingReason = reason;
    timers.cancel(retryTimer);
    failWaiting("not sent: " + reason);
    maybeClosed();
  }

  /**
   * Once every connection has closed: CLOSED. A connection still being made is not waited for: it
   * is disposed when it arrives.
   */
  private void maybeClosed() {
    if (state != CLOSING || current != null || !retiring.isEmpty()) {
      return;
    }
    state = CLOSED;
    timers.cancel(retryTimer);
    timers.cancel(waitTimer);
    CloseReason reason = closingReason;
    failWaiting("not sent: " + reason);
    release(setupMetadata);
    release(setupData);
    setupMetadata = null;
    setupData = null;
    if (!firstConnection.isDone()) {
      firstConnection.completeExceptionally(new java.io.IOException("cannot connect: " + reason));
    }
    if (closeFuture.complete(reason)) {
      notifyListeners(l -> l.onClosed(this, reason));
    }
    runReadyCallbacks();
  }

  @Override
  public void close() {
    onLoop(
        () -> {
          if (state == CLOSING) {
            dispose(); // a second close forces it, as for any connection
            return;
          }
          beginClose(false);
        });
  }

  /** Closes gracefully unless already closing: for a client shutting down. Any thread. */
  public void closeForShutdown() {
    onLoop(
        () -> {
          if (state < CLOSING) {
            beginClose(false);
          }
        });
  }

  @Override
  public void dispose() {
    onLoop(() -> beginClose(true));
  }

  private void beginClose(boolean now) {
    if (state == CLOSED) {
      return;
    }
    boolean first = state < CLOSING;
    state = CLOSING;
    if (first || now) {
      closingReason =
          now
              ? new CloseReason(
                  CloseReason.Kind.DISPOSED,
                  ErrorCode.CANCELED,
                  "the connection was disposed",
                  null)
              : new CloseReason(
                  CloseReason.Kind.CLOSED_BY_THIS_SIDE,
                  ErrorCode.CONNECTION_CLOSE,
                  "the connection was closed",
                  null);
    }
    timers.cancel(retryTimer);
    flowing = false;
    failWaiting("not sent: the connection is closing");
    Connection c = current;
    if (first) {
      CloseReason reason = closingReason;
      notifyListeners(l -> l.onDraining(this, reason));
    }
    List<Connection> all = new ArrayList<>(retiring);
    if (c != null) {
      all.add(c);
    }
    for (Connection connection : all) {
      if (now) {
        connection.dispose();
      } else if (!connection.isDraining()) {
        connection.close(); // not a second close, which would force it
      }
    }
    maybeClosed();
  }

  // ---------------------------------------------------------------- requests

  /**
   * The connection a new call goes to now, or null: there is none, it no longer takes requests, or
   * calls are waiting (which go first, in order).
   */
  private Connection usable() {
    return waitingBytes.get() == 0 ? open() : null;
  }

  /** The current connection if it takes requests, else null. */
  private Connection open() {
    Connection c = current;
    return c != null && c.isOpen() && !c.isDraining() ? c : null;
  }

  @Override
  public boolean fireAndForget(ByteBuf metadata, ByteBuf data) {
    Connection c = usable();
    if (c != null) {
      return c.fireAndForget(metadata, data);
    }
    if (state >= CLOSING || settings.whileDisconnected() == Reconnect.WhileDisconnected.FAIL_FAST) {
      release(metadata);
      release(data);
      LOG.log(Level.DEBUG, "fire-and-forget not sent: {0}", noConnection());
      return false;
    }
    return park(new Waiting(Waiting.FNF, metadata, data, 0, true, null));
  }

  // The encoded forms go to the current connection, which writes the value into its frame; while
  // there is none, the interface's defaults encode it into a buffer, which waits as any other.

  @Override
  public <T> boolean fireAndForget(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    Connection c = usable();
    return c != null
        ? c.fireAndForget(metadata, value, encoder)
        : Connection.super.fireAndForget(metadata, value, encoder);
  }

  @Override
  public <T> Stream requestResponse(
      ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, StreamListener listener) {
    Connection c = usable();
    return c != null
        ? c.requestResponse(metadata, value, encoder, listener)
        : Connection.super.requestResponse(metadata, value, encoder, listener);
  }

  @Override
  public <T> Stream requestStream(
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder,
      long initialRequestN,
      StreamListener listener) {
    Connection c = usable();
    return c != null
        ? c.requestStream(metadata, value, encoder, initialRequestN, listener)
        : Connection.super.requestStream(metadata, value, encoder, initialRequestN, listener);
  }

  @Override
  public void metadataPush(ByteBuf metadata) {
    Connection c = usable();
    if (c != null) {
      c.metadataPush(metadata);
      return;
    }
    if (state >= CLOSING || settings.whileDisconnected() == Reconnect.WhileDisconnected.FAIL_FAST) {
      release(metadata);
      LOG.log(Level.WARNING, "metadata push not sent: {0}", noConnection());
      return;
    }
    park(new Waiting(Waiting.PUSH, metadata, null, 0, true, null));
  }

  @Override
  public Stream requestResponse(ByteBuf metadata, ByteBuf data, StreamListener listener) {
    Connection c = usable();
    if (c != null) {
      return c.requestResponse(metadata, data, listener);
    }
    return parkOrFail(new Waiting(Waiting.RESPONSE, metadata, data, 1, true, listener));
  }

  @Override
  public Stream requestStream(
      ByteBuf metadata, ByteBuf data, long initialRequestN, StreamListener listener) {
    ConnectionEngine.checkRequestN(initialRequestN, metadata, data);
    Connection c = usable();
    if (c != null) {
      return c.requestStream(metadata, data, initialRequestN, listener);
    }
    return parkOrFail(new Waiting(Waiting.STREAM, metadata, data, initialRequestN, true, listener));
  }

  @Override
  public Stream requestChannel(
      ByteBuf metadata,
      ByteBuf data,
      long initialRequestN,
      boolean complete,
      StreamListener listener) {
    ConnectionEngine.checkRequestN(initialRequestN, metadata, data);
    Connection c = usable();
    if (c != null) {
      return c.requestChannel(metadata, data, initialRequestN, complete, listener);
    }
    return parkOrFail(
        new Waiting(Waiting.CHANNEL, metadata, data, initialRequestN, complete, listener));
  }

  private Stream parkOrFail(Waiting call) {
    if (state >= CLOSING) {
      onLoopOrHere(() -> call.fail("not sent: the connection is closed"));
    } else if (settings.whileDisconnected() == Reconnect.WhileDisconnected.FAIL_FAST) {
      String why = "not sent: " + noConnection();
      onLoopOrHere(() -> call.fail(why));
    } else {
      park(call);
    }
    return call;
  }

  private String noConnection() {
    if (state >= CLOSING) {
      return "the connection is closed";
    }
    String problem = lastProblem;
    return "no connection" + (problem.isEmpty() ? "" : " (" + problem + ")") + "; reconnecting";
  }

  /**
   * A call waits for the next connection: counted here, queued on the loop. Returns false when it
   * failed at once (too much waits already); off the loop that throws instead.
   */
  private boolean park(Waiting call) {
    long total = waitingBytes.addAndGet(call.bytes);
    if (total > config.maxQueuedCallBytes()) {
      waitingBytes.addAndGet(-call.bytes);
      if (!executor.inEventLoop()) {
        call.releasePayload();
        throw new RejectedExecutionException(
            "requests waiting for a connection hold "
                + config.maxQueuedCallBytes()
                + " bytes already");
      }
      call.fail("not sent: too many requests are waiting for a connection");
      return false;
    }
    call.counted = true;
    onLoopOrHere(() -> enqueue(call));
    return true;
  }

  private void enqueue(Waiting call) {
    if (call.state != Waiting.PARKED) {
      return; // cancelled before it reached the loop
    }
    if (state >= CLOSING) {
      call.fail("not sent: the connection is closing");
      return;
    }
    Connection c = open();
    if (flowing && c != null && waiting.isEmpty()) {
      call.send(c);
      return;
    }
    call.deadlineNanos = timers.nanoTime() + settings.maxWait().toNanos();
    waiting.add(call);
    if (!waitTimer.isScheduled()) {
      timers.schedule(waitTimer, call.deadlineNanos);
    }
  }

  /** Sends the calls that waited, in order, on the new connection. */
  private void sendWaiting() {
    timers.cancel(waitTimer);
    Waiting call;
    while ((call = waiting.poll()) != null) {
      if (call.state != Waiting.PARKED) {
        cancelledWaiting--;
        continue;
      }
      Connection c = open();
      if (c == null) {
        waiting.addFirst(call);
        scheduleWaitTimer();
        return;
      }
      call.send(c);
    }
  }

  private void expireWaiting(long nowNanos) {
    Waiting call;
    while ((call = waiting.peek()) != null && call.deadlineNanos - nowNanos <= 0) {
      waiting.poll();
      if (call.state != Waiting.PARKED) {
        cancelledWaiting--;
        continue;
      }
      call.fail("not sent: no connection within " + settings.maxWait() + " (" + lastProblem + ")");
    }
    scheduleWaitTimer();
  }

  private void scheduleWaitTimer() {
    Waiting head;
    while ((head = waiting.peek()) != null && head.state != Waiting.PARKED) {
      waiting.poll();
      cancelledWaiting--;
    }
    if (head != null) {
      timers.schedule(waitTimer, head.deadlineNanos);
    }
  }

  /** Fails every waiting call with REJECTED: none of them was sent. */
  private void failWaiting(String message) {
    timers.cancel(waitTimer);
    Waiting call;
    while ((call = waiting.poll()) != null) {
      call.fail(message);
    }
    cancelledWaiting = 0;
  }

  /** A waiting call was cancelled; drops the cancelled ones once they are half the queue. */
  private void waitingCancelled() {
    cancelledWaiting++;
    if (cancelledWaiting > 64 && cancelledWaiting > waiting.size() / 2) {
      waiting.removeIf(call -> call.state != Waiting.PARKED);
      cancelledWaiting = 0;
    }
  }

  // ---------------------------------------------------------------- the rest of Connection

  @Override
  public EventExecutor executor() {
    return executor;
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  @Override
  public String metadataMimeType() {
    return config.metadataMimeType();
  }

  @Override
  public String dataMimeType() {
    return config.dataMimeType();
  }

  @Override
  public SocketAddress remoteAddress() {
    Connection c = current;
    return c != null ? c.remoteAddress() : remoteAddress;
  }

  @Override
  public SocketAddress localAddress() {
    Connection c = current;
    return c != null ? c.localAddress() : localAddress;
  }

  /** The current connection's; null between connections. */
  @Override
  public javax.net.ssl.SSLSession tlsSession() {
    Connection c = current;
    return c != null ? c.tlsSession() : null;
  }

  @Override
  public void sendLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    Connection c = usable();
    if (c != null) {
      c.sendLease(ttlMillis, numberOfRequests, metadata);
    } else {
      release(metadata); // leases are per connection: the next one starts without
    }
  }

  @Override
  public boolean isWritable() {
    Connection c = usable();
    return c != null && c.isWritable();
  }

  @Override
  public boolean isReadyForCalls() {
    Connection c = open();
    return c != null && flowing && waitingBytes.get() == 0 && c.isReadyForCalls();
  }

  @Override
  public void whenReadyForCalls(Runnable callback) {
    // With the loop shut down the connection is closed: call back here, without touching the loop's
    // list (other threads may be here at once).
    onLoopOrElse(
        () -> {
          readyCallbacks.add(callback);
          runReadyCallbacks();
        },
        () -> runReadyCallback(callback));
  }

  /**
   * Runs the readiness callbacks if this is ready for calls or closed; otherwise makes sure the
   * current connection calls back when it is. A connection lost or retired meanwhile calls back for
   * nothing: the callbacks then wait for the next one.
   */
  private void runReadyCallbacks() {
    if (readyCallbacks.isEmpty()) {
      return;
    }
    if (state == CLOSED || isReadyForCalls()) {
      List<Runnable> ready = new ArrayList<>(readyCallbacks);
      readyCallbacks.clear();
      ready.forEach(ReconnectingConnection::runReadyCallback);
      return;
    }
    Connection c = open();
    if (c != null && flowing && readyArmedOn != c) {
      readyArmedOn = c;
      c.whenReadyForCalls(
          () -> {
            if (readyArmedOn == c) {
              readyArmedOn = null;
            }
            runReadyCallbacks();
          });
    }
  }

  @Override
  public boolean awaitReadyForCalls(Duration timeout) throws InterruptedException {
    if (executor.inEventLoop()) {
      throw new IllegalStateException("awaitReadyForCalls would block the event loop");
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (isReadyForCalls()) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (state >= CLOSING || left <= 0) {
        return false;
      }
      CompletableFuture<Void> signal = new CompletableFuture<>();
      Runnable callback = () -> signal.complete(null);
      whenReadyForCalls(callback);
      try {
        signal.get(left, TimeUnit.NANOSECONDS); // parks: a virtual thread unmounts
      } catch (TimeoutException e) {
        // With the loop shut down the list is no longer read, and is not touched off the loop.
        onLoopOrElse(() -> readyCallbacks.remove(callback), () -> {});
        return isReadyForCalls();
      } catch (ExecutionException e) {
        throw new IllegalStateException(e.getCause());
      }
    }
  }

  @Override
  public double availability() {
    Connection c = usable();
    return c == null ? 0 : c.availability();
  }

  /** The open streams of the current connection (none while there is none). */
  @Override
  public int activeStreams() {
    Connection c = current;
    return c == null ? 0 : c.activeStreams();
  }

  @Override
  public void addListener(ConnectionListener listener) {
    listeners.add(listener);
  }

  @Override
  public CompletionStage<CloseReason> onClose() {
    return closeFuture.minimalCompletionStage();
  }

  @Override
  public boolean isOpen() {
    return state != CLOSED;
  }

  @Override
  public boolean isDraining() {
    return state == CLOSING;
  }

  @Override
  public String toString() {
    return "ReconnectingConnection[" + remoteAddress() + " " + current + "]";
  }

  // ---------------------------------------------------------------- helpers

  private void notifyListeners(Consumer<ConnectionListener> event) {
    for (ConnectionListener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "connection listener threw", e);
      }
    }
  }

  /** Runs {@code task} on the loop: now when on it, else as a task. */
  private void onLoop(Runnable task) {
    if (executor.inEventLoop()) {
      task.run();
    } else {
      executor.execute(task);
    }
  }

  /** As {@link #onLoop}, but here when the loop has shut down (nothing else would run it). */
  private void onLoopOrHere(Runnable task) {
    onLoopOrElse(task, task);
  }

  /** As {@link #onLoop}, but {@code ifLoopGone} runs here instead when the loop has shut down. */
  private void onLoopOrElse(Runnable task, Runnable ifLoopGone) {
    if (executor.inEventLoop()) {
      task.run();
      return;
    }
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      ifLoopGone.run();
    }
  }

  private static void runReadyCallback(Runnable callback) {
    try {
      callback.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "readiness callback threw", e);
    }
  }

  private static ByteBuf retain(ByteBuf buf) {
    return buf == null ? null : buf.retainedDuplicate();
  }

  private static void release(ByteBuf buf) {
    if (buf != null) {
      buf.release();
    }
  }

  private static Throwable unwrap(Throwable t) {
    while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Forwards an underlying connection's events as this connection's. */
  private final class Forwarder implements ConnectionListener {
    private final Connection connection;

    Forwarder(Connection connection) {
      this.connection = connection;
    }

    private boolean isCurrent() {
      return connection == current;
    }

    @Override
    public void onWritable(Connection c) {
      if (isCurrent()) {
        notifyListeners(l -> l.onWritable(ReconnectingConnection.this));
      }
    }

    @Override
    public void onLeaseGranted(Connection c, int ttlMillis, int requests) {
      if (isCurrent()) {
        startFlowing(); // what waited goes first
        notifyListeners(l -> l.onLeaseGranted(ReconnectingConnection.this, ttlMillis, requests));
        runReadyCallbacks();
      }
    }

    @Override
    public void onLeaseExpired(Connection c) {
      if (isCurrent()) {
        notifyListeners(l -> l.onLeaseExpired(ReconnectingConnection.this));
      }
    }

    @Override
    public void onDraining(Connection c, CloseReason reason) {
      if (reason.kind() == CloseReason.Kind.CLOSED_BY_PEER) {
        serverDraining(connection, reason);
      } else if (isCurrent() && state < CLOSING) {
        // The application closed the underlying connection itself: it wants no more.
        beginClose(false);
      }
    }

    // Resumption under reconnecting: the session's own events are this connection's.

    @Override
    public void onDisconnected(Connection c, String reason) {
      if (isCurrent()) {
        notifyListeners(l -> l.onDisconnected(ReconnectingConnection.this, reason));
      }
    }

    @Override
    public void onReconnecting(Connection c, int attempt, long delayMillis) {
      if (isCurrent()) {
        notifyListeners(l -> l.onReconnecting(ReconnectingConnection.this, attempt, delayMillis));
      }
    }

    @Override
    public void onResumed(Connection c) {
      if (isCurrent()) {
        notifyListeners(l -> l.onResumed(ReconnectingConnection.this));
      }
    }

    @Override
    public void onResumeRejected(Connection c, String message) {
      if (isCurrent()) {
        notifyListeners(l -> l.onResumeRejected(ReconnectingConnection.this, message));
      }
    }
  }

  /** The budget of the connection {@code stream} (one of this one's) was sent on, or null. */
  static UnreadBudget unreadBudgetOf(Stream stream) {
    return stream instanceof ReconnectingConnection.Waiting w && w.sent instanceof DefaultStream d
        ? d.engine.unread
        : null;
  }

  /**
   * A request made while there was no connection: it waits for the next one (or fails at once),
   * then stands for the stream the connection gives it.
   */
  private final class Waiting implements Stream, StreamListener {
    static final int FNF = 0;
    static final int PUSH = 1;
    static final int RESPONSE = 2;
    static final int STREAM = 3;
    static final int CHANNEL = 4;

    static final int PARKED = 0;
    static final int SENT = 1;
    static final int CANCELLED = 2;
    static final int FAILED = 3;

    final int kind;
    final boolean complete;
    final StreamListener listener;
    final long bytes;
    ByteBuf metadata;
    ByteBuf data;
    long requestN;
    long deadlineNanos;

    /** Whether its bytes are in {@link #waitingBytes}. */
    boolean counted;

    /** A channel whose outbound half this side completed while it waited. Loop only. */
    boolean completeWhenSent;

    volatile int state = PARKED;
    volatile Stream sent;

    /** Whether the real stream ended (it may, within the call that sends it). */
    volatile boolean ended;

    Waiting(
        int kind,
        ByteBuf metadata,
        ByteBuf data,
        long requestN,
        boolean complete,
        StreamListener listener) {
      this.kind = kind;
      this.metadata = metadata;
      this.data = data;
      this.requestN = requestN;
      this.complete = complete;
      this.listener = listener;
      this.bytes =
          CALL_OVERHEAD
              + (metadata == null ? 0 : metadata.readableBytes())
              + (data == null ? 0 : data.readableBytes());
    }

    /** Sends it on {@code c}, on the loop. */
    void send(Connection c) {
      uncount();
      ByteBuf m = metadata;
      ByteBuf d = data;
      metadata = null;
      data = null;
      try {
        switch (kind) {
          case FNF:
            if (!c.fireAndForget(m, d)) {
              LOG.log(Level.DEBUG, "a fire-and-forget that waited was not sent");
            }
            break;
          case PUSH:
            c.metadataPush(m);
            break;
          case RESPONSE:
            sent = c.requestResponse(m, d, this);
            break;
          case STREAM:
            sent = c.requestStream(m, d, requestN, this);
            break;
          default:
            sent = c.requestChannel(m, d, requestN, complete || completeWhenSent, this);
            break;
        }
        state = SENT;
      } catch (RuntimeException e) {
        // An unusable buffer: the connection released it and wrote nothing; only this call fails.
        fail(ErrorCode.INVALID, "not sent: " + e);
      }
    }

    /** Fails it with REJECTED before it was sent: it never was. */
    void fail(String message) {
      fail(ErrorCode.REJECTED, message);
    }

    /** Fails it before it was sent; the listener hears of it. Loop (or the caller's thread). */
    private void fail(int code, String message) {
      if (state != PARKED) {
        return;
      }
      state = FAILED;
      uncount();
      releasePayload();
      if (listener != null) {
        try {
          listener.onError(this, code, message);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "stream listener threw", e);
        }
      } else if (kind == PUSH) {
        LOG.log(Level.WARNING, "metadata push not sent: {0}", message);
      } else {
        LOG.log(Level.DEBUG, "fire-and-forget not sent: {0}", message);
      }
    }

    private void uncount() {
      if (counted) {
        counted = false;
        waitingBytes.addAndGet(-bytes);
      }
    }

    void releasePayload() {
      release(metadata);
      release(data);
      metadata = null;
      data = null;
    }

    private void checkLoop() {
      if (!executor.inEventLoop()) {
        throw new IllegalStateException("stream methods must be called on the event loop");
      }
    }

    private Stream sentOrThrow(String what) {
      checkLoop();
      Stream s = sent;
      if (s == null) {
        throw new IllegalStateException(
            "cannot " + what + ": the request is waiting for a connection (wait for onReady)");
      }
      return s;
    }

    @Override
    public int streamId() {
      Stream s = sent;
      return s == null ? 0 : s.streamId();
    }

    @Override
    public long credit() {
      Stream s = sent;
      return s == null ? 0 : s.credit();
    }

    @Override
    public boolean isReady() {
      checkLoop();
      Stream s = sent;
      return s != null && s.isReady();
    }

    @Override
    public void next(ByteBuf m, ByteBuf d) {
      sentForPayload(m, d).next(m, d);
    }

    @Override
    public void nextAndComplete(ByteBuf m, ByteBuf d) {
      sentForPayload(m, d).nextAndComplete(m, d);
    }

    @Override
    public <T> void next(ByteBuf m, T value, PayloadEncoder<? super T> encoder) {
      sentForPayload(m, null).next(m, value, encoder);
    }

    @Override
    public <T> void nextAndComplete(ByteBuf m, T value, PayloadEncoder<? super T> encoder) {
      sentForPayload(m, null).nextAndComplete(m, value, encoder);
    }

    /** The stream sent for this request; releases a payload's buffers when there is none yet. */
    private Stream sentForPayload(ByteBuf m, ByteBuf d) {
      try {
        return sentOrThrow("send");
      } catch (IllegalStateException e) {
        release(m);
        release(d);
        throw e;
      }
    }

    @Override
    public void complete() {
      checkLoop();
      Stream s = sent;
      if (s != null) {
        s.complete();
      } else if (state == PARKED && kind == CHANNEL) {
        completeWhenSent = true; // the channel goes out with its outbound half complete
      }
    }

    @Override
    public void error(int errorCode, String message) {
      checkLoop();
      Stream s = sent;
      if (s != null) {
        s.error(errorCode, message);
      } else {
        endParked(errorCode, message);
      }
    }

    @Override
    public void fail(Throwable cause) {
      checkLoop();
      Stream s = sent;
      if (s != null) {
        s.fail(cause);
      } else {
        endParked(ErrorCode.CANCELED, "the request failed before it was sent: " + cause);
      }
    }

    /**
     * This side ended a request that never went out: nothing reaches the peer; the listener hears
     * of it as the stream's end.
     */
    private void endParked(int errorCode, String message) {
      if (state == PARKED) {
        fail(errorCode, message);
        waitingCancelled();
      }
    }

    @Override
    public void request(long n) {
      checkLoop();
      Stream s = sent;
      if (s != null) {
        s.request(n);
      } else if (state == PARKED && n > 0) {
        // Credit asked for before the request went out goes out with it.
        requestN = requestN + n < 0 ? Long.MAX_VALUE : requestN + n;
      }
    }

    @Override
    public void cancel() {
      checkLoop();
      Stream s = sent;
      if (s != null) {
        s.cancel();
      } else if (state == PARKED) {
        // Never sent; it leaves the queue later. The listener is not called.
        state = CANCELLED;
        uncount();
        releasePayload();
        waitingCancelled();
      }
    }

    @Override
    public Connection connection() {
      return ReconnectingConnection.this;
    }

    @Override
    public boolean isCancelled() {
      Stream s = sent;
      return s == null ? state == CANCELLED : s.isCancelled();
    }

    @Override
    public boolean isInboundDone() {
      Stream s = sent;
      return s == null ? state != PARKED || ended : s.isInboundDone();
    }

    @Override
    public boolean isOutboundDone() {
      Stream s = sent;
      return s == null ? state != PARKED || ended : s.isOutboundDone();
    }

    // The real stream's events, passed on as this stream's.

    @Override
    public void onNext(Stream stream, ByteBuf m, ByteBuf d) {
      listener.onNext(this, m, d);
    }

    @Override
    public void onComplete(Stream stream) {
      ended = true;
      listener.onComplete(this);
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      ended = true;
      listener.onError(this, errorCode, message);
    }

    @Override
    public void onReady(Stream stream) {
      listener.onReady(this);
    }

    @Override
    public void onCancel(Stream stream) {
      listener.onCancel(this);
    }
  }
}
