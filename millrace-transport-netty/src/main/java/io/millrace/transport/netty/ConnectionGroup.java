package io.millrace.transport.netty;

import io.millrace.core.Connection;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.core.internal.ReconnectingConnection;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The open connections of a server or a client, and their shutdown in the style of grpc-java's:
 * {@link #shutdown()} closes each gracefully, {@link #shutdownNow()} at once; once the last has
 * closed the event loops are shut down and {@link #awaitTermination} returns.
 */
final class ConnectionGroup {
  /** How to close one open connection: gracefully for a shutdown, or at once. */
  private record Closer(Runnable gracefully, Runnable now) {}

  /**
   * Each open connection (an RSocket {@link Connection}, or the {@link Channel} of one handed to
   * another protocol), with how to close it.
   */
  private final Map<Object, Closer> open = new ConcurrentHashMap<>();

  private final CompletableFuture<Void> allClosed = new CompletableFuture<>();
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final EventLoopGroup[] loops;
  private volatile boolean shutdown;

  ConnectionGroup(EventLoopGroup... loops) {
    this.loops = loops;
    allClosed.whenComplete((ignored, failure) -> shutDownLoops());
  }

  /** Tracks a new connection; one that arrives after {@link #shutdown()} is closed at once. */
  void add(ConnectionEngine engine) {
    add(engine, engine::closeForShutdown);
  }

  /** Tracks a client connection that reconnects by itself. */
  void add(ReconnectingConnection connection) {
    add(connection, connection::closeForShutdown);
  }

  /**
   * Tracks {@code connection}; {@code closeForShutdown} closes it gracefully unless the application
   * is closing it already (not a second close, which would force it).
   */
  private void add(Connection connection, Runnable closeForShutdown) {
    open.put(connection, new Closer(closeForShutdown, connection::dispose));
    connection
        .onClose()
        .whenComplete(
            (reason, failure) -> {
              open.remove(connection);
              checkAllClosed();
            });
    if (shutdown) {
      closeForShutdown.run();
    }
  }

  /**
   * Tracks a connection handed to another protocol's server (HTTP/2 to the gRPC endpoint), which
   * {@code closeGracefully} asks to end once its calls are done; a forced shutdown closes it.
   */
  void add(Channel channel, Runnable closeGracefully) {
    open.put(channel, new Closer(closeGracefully, channel::close));
    channel
        .closeFuture()
        .addListener(
            f -> {
              open.remove(channel);
              checkAllClosed();
            });
    if (shutdown) {
      closeGracefully.run();
    }
  }

  int size() {
    return open.size();
  }

  boolean isShutdown() {
    return shutdown;
  }

  boolean isTerminated() {
    return terminated.isDone();
  }

  void shutdown() {
    shutdown = true;
    for (Closer closer : open.values()) {
      closer.gracefully().run();
    }
    checkAllClosed();
  }

  void shutdownNow() {
    shutdown = true;
    for (Closer closer : open.values()) {
      closer.now().run();
    }
    checkAllClosed();
  }

  /** Runs {@code action} once terminated. */
  void onTerminated(Runnable action) {
    terminated.whenComplete((ignored, failure) -> action.run());
  }

  boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    try {
      terminated.get(timeout, unit);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  private void checkAllClosed() {
    if (shutdown && open.isEmpty()) {
      allClosed.complete(null);
    }
  }

  private void shutDownLoops() {
    CompletableFuture<?>[] done = new CompletableFuture<?>[loops.length];
    for (int i = 0; i < loops.length; i++) {
      CompletableFuture<Void> loopDone = new CompletableFuture<>();
      loops[i].shutdownGracefully(0, 5, TimeUnit.SECONDS).addListener(f -> loopDone.complete(null));
      done[i] = loopDone;
    }
    CompletableFuture.allOf(done).whenComplete((ignored, failure) -> terminated.complete(null));
  }
}
