package io.millrace.transport.netty;

import io.millrace.core.internal.ConnectionEngine;
import io.netty.channel.EventLoopGroup;
import java.util.Set;
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
  private final Set<ConnectionEngine> open = ConcurrentHashMap.newKeySet();
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
    open.add(engine);
    engine
        .onClose()
        .whenComplete(
            (reason, failure) -> {
              open.remove(engine);
              checkAllClosed();
            });
    if (shutdown) {
      engine.closeForShutdown();
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
    for (ConnectionEngine engine : open) {
      engine.closeForShutdown(); // not a second close() for one the application is closing
    }
    checkAllClosed();
  }

  void shutdownNow() {
    shutdown = true;
    for (ConnectionEngine engine : open) {
      engine.dispose();
    }
    checkAllClosed();
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
