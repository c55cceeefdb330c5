package io.millrace.bench.millrace;

import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.IdleConnections;
import io.millrace.core.Connection;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.TcpClient;
import io.millrace.transport.netty.TcpServer;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Millrace's Reactor flavour, used as a Reactor user would: handlers return {@code Mono.just},
 * {@code Flux.generate} and a concatenated echo; the client subscribes a lambda per
 * request-response and a {@link BaseSubscriber} that requests {@link MillraceSystem#INITIAL} and
 * then {@link MillraceSystem#BATCH} per batch on streams and channels (as the rsocket-java client
 * does in this harness). Default {@link io.millrace.streams.StreamsOptions}: received payloads are
 * heap copies, so each message costs the flavour's own objects on top of the core's.
 */
public final class MillraceReactorSystem implements BenchSystem {

  @Override
  public String name() {
    return "millrace-reactor";
  }

  @Override
  public BenchServer startServer(int port, int payloadSize, LongAdder handled) throws Exception {
    ByteBuf response = MillraceSystem.payload(payloadSize);
    ReactorHandler handler =
        new ReactorHandler() {
          @Override
          public Mono<Payload> requestResponse(Payload payload) {
            handled.increment();
            return Mono.just(Payload.of(response));
          }

          @Override
          public Mono<Void> fireAndForget(Payload payload) {
            handled.increment();
            return Mono.empty();
          }

          @Override
          public Flux<Payload> requestStream(Payload payload) {
            return Flux.generate(
                sink -> {
                  handled.increment();
                  sink.next(Payload.of(response));
                });
          }

          @Override
          public Flux<Payload> requestChannel(Payload first, Flux<Payload> inbound) {
            return Flux.concat(Mono.just(first), inbound).doOnNext(p -> handled.increment());
          }
        };
    TcpServer server =
        TcpServer.builder()
            .bindAddress("127.0.0.1", port)
            .eventLoopThreads(1)
            .acceptor((setup, connection) -> ReactorResponder.of(handler))
            .bind();
    return () -> {
      server.close();
      response.unwrap().release();
    };
  }

  @Override
  public BenchClient connect(int port, int payloadSize) throws Exception {
    TcpClient client = TcpClient.builder().eventLoopThreads(1).build();
    Connection connection = client.connect("127.0.0.1", port).get(10, TimeUnit.SECONDS);
    return new Client(client, connection, MillraceSystem.payload(payloadSize));
  }

  @Override
  public IdleConnections openIdle(
      int port, int count, int keepAliveSeconds, IntFunction<InetSocketAddress> localAddress)
      throws Exception {
    return new MillraceSystem(false).openIdle(port, count, keepAliveSeconds, localAddress);
  }

  private static final class Client implements BenchClient {
    private final TcpClient client;
    private final Connection connection;
    private final ReactorRequester requester;
    private final ByteBuf payload;
    private volatile Batching stream;
    private volatile Batching channel;

    Client(TcpClient client, Connection connection, ByteBuf payload) {
      this.client = client;
      this.connection = connection;
      this.requester = ReactorRequester.of(connection);
      this.payload = payload;
    }

    @Override
    public void requestResponse(Runnable onResponse) {
      requester.requestResponse(Payload.of(payload)).subscribe(p -> onResponse.run());
    }

    @Override
    public void startFireAndForget(LongAdder sent) {
      MillraceSystem.pumpFireAndForget(
          connection,
          sent,
          () -> {
            requester.fireAndForget(Payload.of(payload)).subscribe();
            return true;
          });
    }

    @Override
    public void startStream(LongAdder received) {
      Batching consumer = new Batching(received);
      stream = consumer;
      requester.requestStream(Payload.of(payload)).subscribe(consumer);
    }

    @Override
    public void startChannel(LongAdder received) {
      Batching consumer = new Batching(received);
      channel = consumer;
      requester
          .requestChannel(Flux.generate(sink -> sink.next(Payload.of(payload))))
          .subscribe(consumer);
    }

    @Override
    public java.util.concurrent.ScheduledExecutorService eventLoop() {
      return connection.executor();
    }

    @Override
    public void close() {
      Batching s = stream;
      if (s != null) {
        s.dispose(); // cancels
      }
      Batching c = channel;
      if (c != null) {
        c.dispose();
      }
      connection.dispose();
      client.close();
      payload.unwrap().release();
    }
  }

  /** Requests INITIAL up front and BATCH more each time a batch arrived, counting every item. */
  private static final class Batching extends BaseSubscriber<Payload> {
    private final LongAdder received;
    private int sinceRequest;

    Batching(LongAdder received) {
      this.received = received;
    }

    @Override
    protected void hookOnSubscribe(Subscription subscription) {
      subscription.request(MillraceSystem.INITIAL);
    }

    @Override
    protected void hookOnNext(Payload value) {
      received.increment();
      if (++sinceRequest == MillraceSystem.BATCH) {
        sinceRequest = 0;
        request(MillraceSystem.BATCH);
      }
    }
  }
}
