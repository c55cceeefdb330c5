package io.millrace.interop;

import static io.millrace.interop.Interop.HOST;
import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Responder;
import io.millrace.core.Resumption;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.testing.ChaosProxy;
import io.millrace.testing.SequencedPayload;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.core.Resume;
import io.rsocket.resume.InMemoryResumableFramesStore;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.ByteBufPayload;
import io.rsocket.util.DefaultPayload;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.util.retry.Retry;

/**
 * Resumption against rsocket-java 1.1.5 in both directions, through a proxy that resets the
 * connection while a request-stream of sequenced payloads (1 byte to 64 KiB) runs: every item
 * arrives once, in order. rsocket-java is configured as it must be for that to hold: a store large
 * enough for what is in flight (its default, 100,000 bytes, evicts unconfirmed frames and the
 * session is then lost) and trimmed on keepalive.
 */
@Timeout(90)
class ResumptionInteropTest {
  static final int ITEMS = 3_000;
  static final int RESETS = 20;

  static Resume javaResume(String side) {
    return new Resume()
        .sessionDuration(Duration.ofMinutes(1))
        .cleanupStoreOnKeepAlive()
        .storeFactory(token -> new InMemoryResumableFramesStore(side, token, 64 << 20))
        .retry(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofMillis(20)));
  }

  /**
   * Breaks the connection {@code RESETS} times, each once something has passed since the last:
   * alternately a reset (RST both ways) and a cut a few hundred bytes on, which lands inside a
   * frame (a 64 KiB item spans many reads).
   */
  static int resetWhileRunning(ChaosProxy proxy, IntSupplier progress, IntSupplier done)
      throws InterruptedException {
    int resets = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (resets < RESETS && done.getAsInt() == 0 && System.nanoTime() < deadline) {
      int before = progress.getAsInt();
      while ((proxy.open() == 0 || progress.getAsInt() == before)
          && done.getAsInt() == 0
          && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      if (done.getAsInt() != 0) {
        break;
      }
      int accepted = proxy.accepted();
      if (resets % 2 == 0) {
        proxy.reset();
      } else {
        proxy.cutAfterBytes(100 + 37L * resets);
      }
      resets++;
      while (proxy.accepted() == accepted && System.nanoTime() < deadline) {
        Thread.sleep(1); // the client is back before the next reset
      }
    }
    return resets;
  }

  /** Answers a request-stream whose data is a decimal N with sequenced items 0..N-1. */
  static final Responder SEQUENCED_STREAMS =
      new Responder() {
        @Override
        public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
          int total = Integer.parseInt(data.toString(StandardCharsets.UTF_8));
          int[] next = {0};
          StreamListener producer =
              new StreamListener() {
                @Override
                public void onReady(Stream s) {
                  while (next[0] < total && s.credit() > 0 && s.isReady()) {
                    s.next(null, SequencedPayload.item(s.connection().alloc(), next[0]++));
                  }
                  if (next[0] == total && !s.isOutboundDone()) {
                    s.complete();
                  }
                }
              };
          producer.onReady(stream);
          return producer;
        }
      };

  /** A Millrace server with resumption that serves {@link #SEQUENCED_STREAMS}. */
  static MillraceServer resumableServer() throws InterruptedException {
    return MillraceServer.builder()
        .config(ConnectionConfig.builder().resumption(Resumption.defaults()).build())
        .acceptor((setup, connection) -> SEQUENCED_STREAMS)
        .bind();
  }

  @Test
  void rsocketJavaClient_resumesWithMillraceServer() throws Exception {
    MillraceServer server = resumableServer();
    try (ChaosProxy proxy = new ChaosProxy(server.address())) {
      RSocket rsocket =
          RSocketConnector.create()
              .resume(javaResume("client"))
              .keepAlive(Duration.ofMillis(200), Duration.ofSeconds(30))
              .connect(TcpClientTransport.create(HOST, proxy.port()))
              .block(Duration.ofSeconds(5));
      List<String> problems = new CopyOnWriteArrayList<>();
      AtomicInteger received = new AtomicInteger();
      AtomicInteger done = new AtomicInteger();
      Disposable subscription =
          rsocket
              .requestStream(DefaultPayload.create(Integer.toString(ITEMS)))
              .limitRate(8)
              .subscribe(
                  p -> {
                    String problem = SequencedPayload.check(p.sliceData(), received.get());
                    received.incrementAndGet();
                    if (problem != null) {
                      problems.add(problem);
                    }
                    p.release();
                  },
                  e -> {
                    problems.add("error " + e);
                    done.set(2);
                  },
                  () -> done.set(1));
      int resets = resetWhileRunning(proxy, received::get, done::get);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (done.get() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      subscription.dispose();
      rsocket.dispose();
      assertThat(problems).isEmpty();
      assertThat(done).hasValue(1);
      assertThat(received).hasValue(ITEMS);
      assertThat(resets).isEqualTo(RESETS);
      assertThat(proxy.accepted()).isGreaterThan(RESETS);
    } finally {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void millraceClient_resumesWithRSocketJavaServer() throws Exception {
    RSocket handler =
        new RSocket() {
          @Override
          public Flux<Payload> requestStream(Payload payload) {
            int total = Integer.parseInt(payload.getDataUtf8());
            payload.release();
            return Flux.range(0, total)
                .map(
                    i -> ByteBufPayload.create(SequencedPayload.item(ByteBufAllocator.DEFAULT, i)));
          }
        };
    CloseableChannel javaServer =
        RSocketServer.create(SocketAcceptor.with(handler))
            .resume(javaResume("server"))
            .bind(TcpServerTransport.create(HOST, 0))
            .block(Duration.ofSeconds(5));
    try {
      millraceClientResumesThroughResets(javaServer.address());
    } finally {
      javaServer.dispose();
    }
  }

  /**
   * A Millrace client with resumption requests {@link #ITEMS} sequenced items from the server at
   * {@code serverAddress} through a proxy that resets the connection {@link #RESETS} times: every
   * item arrives once, in order, and the session is resumed each time.
   */
  static void millraceClientResumesThroughResets(java.net.InetSocketAddress serverAddress)
      throws Exception {
    MillraceClient client =
        MillraceClient.builder()
            .config(
                ConnectionConfig.builder()
                    .keepAlive(Duration.ofMillis(200), Duration.ofSeconds(30))
                    .resumption(
                        Resumption.builder()
                            .backoff(Duration.ofMillis(10), Duration.ofMillis(100))
                            .build())
                    .build())
            .build();
    try (ChaosProxy proxy = new ChaosProxy(serverAddress)) {
      Connection connection = client.connect(HOST, proxy.port()).get(5, TimeUnit.SECONDS);
      AtomicInteger resumed = new AtomicInteger();
      List<String> events = new CopyOnWriteArrayList<>();
      connection.addListener(
          new ConnectionListener() {
            @Override
            public void onResumed(Connection c) {
              resumed.incrementAndGet();
            }

            @Override
            public void onResumeRejected(Connection c, String message) {
              events.add("rejected: " + message);
            }
          });
      List<String> problems = new CopyOnWriteArrayList<>();
      AtomicInteger received = new AtomicInteger();
      AtomicInteger done = new AtomicInteger();
      connection
          .executor()
          .submit(
              () ->
                  connection.requestStream(
                      null,
                      ByteBufUtil.writeAscii(connection.alloc(), Integer.toString(ITEMS)),
                      8,
                      new StreamListener() {
                        @Override
                        public void onNext(Stream s, ByteBuf m, ByteBuf d) {
                          String problem = SequencedPayload.check(d, received.get());
                          received.incrementAndGet();
                          if (problem != null) {
                            problems.add(problem);
                          }
                          s.request(1);
                        }

                        @Override
                        public void onComplete(Stream s) {
                          done.set(1);
                        }

                        @Override
                        public void onError(Stream s, int code, String message) {
                          problems.add("error " + code + " " + message);
                          done.set(2);
                        }
                      }))
          .get(5, TimeUnit.SECONDS);
      int resets = resetWhileRunning(proxy, received::get, done::get);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (done.get() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(events).isEmpty();
      assertThat(problems).isEmpty();
      assertThat(done).hasValue(1);
      assertThat(received).hasValue(ITEMS);
      assertThat(resets).isEqualTo(RESETS);
      assertThat(resumed.get()).isGreaterThanOrEqualTo(RESETS);
    } finally {
      client.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
