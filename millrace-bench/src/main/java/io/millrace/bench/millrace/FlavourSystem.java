package io.millrace.bench.millrace;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.IdleConnections;
import io.millrace.core.Acceptor;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.transport.netty.MillraceClient;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * One of Millrace's API flavours on the engine's TCP transport, with default options (received
 * payloads are heap copies; nothing to release), used as a user of that flavour would use it. The
 * subclass gives the server's handler and the client's calls; this class the transport, which is
 * the core system's.
 */
abstract class FlavourSystem implements BenchSystem {

  /**
   * The responder: answers request-response with {@code response}, streams {@code response}
   * endlessly, echoes channels, and counts each message in {@code handled}. {@code response} is
   * unreleasable, so it may be sent any number of times.
   */
  Responder responder(ByteBuf response, LongAdder handled) {
    throw new UnsupportedOperationException(name() + " serves through acceptor()");
  }

  /** How the server takes connections: by default every one gets {@link #responder}. */
  Acceptor acceptor(ByteBuf response, LongAdder handled) {
    Responder r = responder(response, handled);
    return (setup, connection) -> r;
  }

  /** The client connection's settings (its SETUP's MIME types, for one). */
  ConnectionConfig clientConfig() {
    return ConnectionConfig.DEFAULT;
  }

  /** The client's calls on {@code connection}, sending {@code payload} (unreleasable). */
  abstract Calls calls(Connection connection, ByteBuf payload);

  @Override
  public final BenchServer startServer(int port, int payloadSize, LongAdder handled)
      throws Exception {
    return MillraceSystem.serveWith(
        port, payloadSize, ConnectionConfig.DEFAULT, response -> acceptor(response, handled));
  }

  @Override
  public boolean supportsTransport(String transport) {
    return true;
  }

  @Override
  public final BenchClient connect(int port, int payloadSize) throws Exception {
    MillraceClient client =
        BenchTransport.client(MillraceClient.builder())
            .config(clientConfig())
            .eventLoopThreads(1)
            .build();
    Connection connection =
        client.connect(BenchTransport.uri(port), null, null).get(10, TimeUnit.SECONDS);
    ByteBuf payload = MillraceSystem.payload(payloadSize);
    Calls calls = calls(connection, payload);
    return new BenchClient() {
      @Override
      public void requestResponse(Runnable onResponse) {
        calls.requestResponse(onResponse);
      }

      @Override
      public void startFireAndForget(LongAdder sent) {
        MillraceSystem.pumpFireAndForget(
            connection,
            sent,
            () -> {
              calls.fireAndForget();
              return true;
            });
      }

      @Override
      public boolean sendsFireAndForgetFromThreads() {
        return true;
      }

      @Override
      public void fireAndForgetFromThisThread(LongAdder sent, BooleanSupplier running)
          throws InterruptedException {
        MillraceSystem.sendFromThread(connection, sent, running, calls::fireAndForgetFromThread);
      }

      @Override
      public void startStream(LongAdder received) {
        calls.startStream(received);
      }

      @Override
      public void startChannel(LongAdder received) {
        calls.startChannel(received);
      }

      @Override
      public ScheduledExecutorService eventLoop() {
        return connection.executor();
      }

      @Override
      public void close() {
        calls.stop();
        connection.dispose();
        client.close();
        payload.unwrap().release();
      }
    };
  }

  @Override
  public final IdleConnections openIdle(
      int port, int count, int keepAliveSeconds, IntFunction<InetSocketAddress> localAddress)
      throws Exception {
    return new MillraceSystem(false).openIdle(port, count, keepAliveSeconds, localAddress);
  }

  /** A flavour's client calls; see {@link BenchClient} for what each must do. */
  abstract static class Calls {
    private final java.util.List<Runnable> onStop =
        new java.util.concurrent.CopyOnWriteArrayList<>();

    abstract void requestResponse(Runnable onResponse);

    /** One fire-and-forget, issued on the event loop. */
    abstract void fireAndForget();

    /**
     * One fire-and-forget from an application thread, as the flavour sends it there (by default as
     * on the loop); throws RejectedExecutionException when the connection refused it.
     */
    void fireAndForgetFromThread() {
      fireAndForget();
    }

    abstract void startStream(LongAdder received);

    abstract void startChannel(LongAdder received);

    /** {@code cancel} runs when the run ends (it cancels a stream or channel started). */
    final void onStop(Runnable cancel) {
      onStop.add(cancel);
    }

    final void stop() {
      onStop.forEach(Runnable::run);
    }
  }
}
