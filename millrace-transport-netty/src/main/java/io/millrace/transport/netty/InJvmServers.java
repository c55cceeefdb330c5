package io.millrace.transport.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.local.LocalAddress;
import io.netty.util.concurrent.EventExecutor;
import java.net.ConnectException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The in-JVM listeners ({@code local://NAME}) of this class loader, by name. */
final class InJvmServers {
  private static final ConcurrentHashMap<String, Listener> BOUND = new ConcurrentHashMap<>();
  private static final AtomicLong CLIENTS = new AtomicLong();

  private InJvmServers() {}

  /** What a server gives its in-JVM listener. */
  interface Listener {
    /** The loop the next accepted connection lives on. */
    EventExecutor nextLoop();

    ByteBufAllocator alloc();

    int maxFrameLength();

    WriteBufferWaterMark waterMark();

    /** Serves a new connection; called on {@code transport.executor()}. */
    void accept(InJvmTransport transport);
  }

  static void bind(String name, Listener listener) {
    if (BOUND.putIfAbsent(name, listener) != null) {
      throw new IllegalStateException("local://" + name + " is already bound in this JVM");
    }
  }

  /**
   * The listener bound to {@code name}, or null. For tests in this package (a recording listener in
   * front of a server's); nothing in the product looks listeners up.
   */
  static Listener listener(String name) {
    return BOUND.get(name);
  }

  static void unbind(String name, Listener listener) {
    BOUND.remove(name, listener);
  }

  /**
   * Connects to the listener {@code name}: returns the client's end, whose first frames reach the
   * server only after it has accepted the connection.
   */
  static InJvmTransport connect(
      String name,
      EventExecutor loop,
      ByteBufAllocator alloc,
      int maxFrameLength,
      WriteBufferWaterMark waterMark)
      throws ConnectException {
    Listener listener = BOUND.get(name);
    if (listener == null) {
      throw new ConnectException("no in-JVM server listens on local://" + name);
    }
    InJvmTransport[] ends =
        InJvmTransport.pair(
            loop,
            alloc,
            maxFrameLength,
            waterMark,
            new LocalAddress(name + "#client-" + CLIENTS.incrementAndGet()),
            listener.nextLoop(),
            listener.alloc(),
            listener.maxFrameLength(),
            listener.waterMark(),
            new LocalAddress(name));
    InJvmTransport server = ends[1];
    // Queued on the server's loop before anything the client flushes: the accept comes first.
    try {
      server.executor().execute(() -> listener.accept(server));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new ConnectException("the server on local://" + name + " has shut down");
    }
    return ends[0];
  }
}
