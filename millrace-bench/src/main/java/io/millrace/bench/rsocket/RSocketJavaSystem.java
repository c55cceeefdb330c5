package io.millrace.bench.rsocket;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.IdleConnections;
import io.millrace.transport.netty.EventLoops;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.ByteBufPayload;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;

/**
 * rsocket-java 1.1.5 (over reactor-netty 1.3.8 and Netty 4.2) as a {@link BenchSystem}, configured
 * for its best honest speed.
 *
 * <p>Settings, both sides:
 *
 * <ul>
 *   <li>TCP on 127.0.0.1 through {@link TcpServerTransport} / {@code TcpClientTransport} built on a
 *       reactor-netty {@code TcpServer} / {@code TcpClient} that runs on exactly one event-loop
 *       thread: {@code LoopResources.create(prefix, 1, true)} (one worker; with no explicit select
 *       count reactor-netty accepts on that same thread, so the server has one thread, not an
 *       acceptor plus a worker). Native epoll, like Millrace's transport ({@code
 *       -Dmillrace.transport=nio} switches both to NIO). reactor-netty's default TCP_NODELAY (on).
 *   <li>{@link PayloadDecoder#ZERO_COPY}: inbound payloads are retained slices of the received
 *       frame, no copy; every payload is released exactly once (the fastest documented setting).
 *   <li>No fragmentation (MTU 0), no resumption, no leasing, default keep-alive (20 s / 90 s),
 *       payloads of {@code payloadSize} bytes of data and no metadata.
 *   <li>Outgoing payloads are {@link ByteBufPayload}s (pooled, recycled) over a retained slice of
 *       one pre-filled direct buffer: rsocket-java frames them zero-copy, so no system-side copy
 *       per message (Netty still writes the payloadSize bytes to the socket every time).
 * </ul>
 *
 * <p>Server semantics: request-response answers each request with a {@code payloadSize}-byte
 * payload; fire-and-forget releases the payload; request-stream is a {@link Flux#generate} that
 * makes one payload per unit of request-n (so it honours the requester's credit exactly);
 * request-channel returns the inbound payloads themselves (zero-copy echo, ownership passes back to
 * rsocket-java, which releases them once written), so the echo demand the client grants flows
 * through as the server's request-n towards the client.
 *
 * <p>The client side and its flow-control settings are described on {@link RSocketJavaClient}.
 */
public final class RSocketJavaSystem implements BenchSystem {
  static final String HOST = "127.0.0.1";
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  @Override
  public String name() {
    return "rsocket-java";
  }

  @Override
  public BenchServer startServer(int port, int payloadSize, LongAdder handled) {
    LoopResources loops = LoopResources.create("rsocket-server", 1, true);
    ByteBuf data = filled(payloadSize);
    try {
      TcpServer tcp = TcpServer.create().host(HOST).port(port).runOn(loops, EventLoops.epoll());
      Responder responder = new Responder(data, handled);
      CloseableChannel channel =
          RSocketServer.create((setup, sendingSocket) -> Mono.just(responder))
              .payloadDecoder(PayloadDecoder.ZERO_COPY)
              .bind(TcpServerTransport.create(tcp))
              .block(TIMEOUT);
      if (channel == null) {
        throw new IllegalStateException("rsocket-java server did not bind to port " + port);
      }
      return new Server(channel, loops, data);
    } catch (RuntimeException e) {
      disposeLoops(loops);
      data.release();
      throw e;
    }
  }

  /**
   * Idle connections: one {@link RSocket} per connection over reactor-netty TCP without a pool, all
   * on one client event loop, KEEPALIVE every {@code keepAliveSeconds} (max lifetime three times
   * that), at most 256 connects at a time.
   */
  @Override
  public IdleConnections openIdle(
      int port,
      int count,
      int keepAliveSeconds,
      java.util.function.IntFunction<java.net.InetSocketAddress> localAddress)
      throws Exception {
    LoopResources loops = LoopResources.create("rsocket-idle", 1, true);
    java.util.function.IntFunction<Mono<RSocket>> connect =
        i -> {
          reactor.netty.tcp.TcpClient tcp =
              reactor.netty.tcp.TcpClient.newConnection()
                  .host(HOST)
                  .port(port)
                  .runOn(loops, EventLoops.epoll());
          java.net.InetSocketAddress local = i < 0 ? null : localAddress.apply(i);
          if (local != null) {
            tcp = tcp.bindAddress(() -> local);
          }
          return io.rsocket.core.RSocketConnector.create()
              .keepAlive(
                  Duration.ofSeconds(keepAliveSeconds), Duration.ofSeconds(3L * keepAliveSeconds))
              .connect(io.rsocket.transport.netty.client.TcpClientTransport.create(tcp));
        };
    java.util.List<RSocket> sockets;
    try {
      sockets =
          Flux.range(0, count)
              .flatMap(connect::apply, 256)
              .collectList()
              .block(Duration.ofMinutes(10));
    } catch (RuntimeException e) {
      disposeLoops(loops);
      throw e;
    }
    java.util.List<RSocket> open = sockets;
    return new IdleConnections() {
      @Override
      public int open() {
        int n = 0;
        for (RSocket socket : open) {
          if (!socket.isDisposed()) {
            n++;
          }
        }
        return n;
      }

      @Override
      public long probeMicros() {
        long start = System.nanoTime();
        RSocket fresh = connect.apply(-1).block(TIMEOUT);
        try {
          Payload answer =
              fresh
                  .requestResponse(io.rsocket.util.DefaultPayload.create(new byte[8]))
                  .block(TIMEOUT);
          answer.release();
          return java.util.concurrent.TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
        } finally {
          fresh.dispose();
        }
      }

      @Override
      public void close() {
        open.forEach(RSocket::dispose);
        disposeLoops(loops);
      }
    };
  }

  @Override
  public BenchClient connect(int port, int payloadSize) throws Exception {
    return RSocketJavaClient.connect(port, payloadSize);
  }

  /** A direct buffer of {@code size} bytes that outgoing payloads are retained slices of. */
  static ByteBuf filled(int size) {
    ByteBuf data = ByteBufAllocator.DEFAULT.directBuffer(size, size);
    for (int i = 0; i < size; i++) {
      data.writeByte('a' + i % 26);
    }
    return data;
  }

  /** Shuts the event loop down at once (no quiet period) and waits for it. */
  static void disposeLoops(LoopResources loops) {
    loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
  }

  private static final class Server implements BenchServer {
    private final CloseableChannel channel;
    private final LoopResources loops;
    private final ByteBuf data;

    Server(CloseableChannel channel, LoopResources loops, ByteBuf data) {
      this.channel = channel;
      this.loops = loops;
      this.data = data;
    }

    @Override
    public void close() {
      try {
        channel.dispose();
        channel.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
      } finally {
        disposeLoops(loops);
        data.release();
      }
    }
  }

  /** The server's handler; one instance serves every connection. */
  private static final class Responder implements RSocket {
    private final ByteBuf data;
    private final LongAdder handled;

    Responder(ByteBuf data, LongAdder handled) {
      this.data = data;
      this.handled = handled;
    }

    private Payload payload() {
      return ByteBufPayload.create(data.retainedSlice());
    }

    @Override
    public Mono<Payload> requestResponse(Payload request) {
      request.release();
      handled.increment();
      return Mono.just(payload());
    }

    @Override
    public Mono<Void> fireAndForget(Payload message) {
      message.release();
      handled.increment();
      return Mono.empty();
    }

    @Override
    public Flux<Payload> requestStream(Payload request) {
      request.release();
      return Flux.generate(
          sink -> {
            handled.increment();
            sink.next(payload());
          });
    }

    @Override
    public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
      return Flux.from(payloads)
          .map(
              p -> {
                handled.increment();
                return p;
              });
    }
  }
}
