package io.millrace.interop;

import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketServer;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.transport.ServerTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An rsocket-java server with the semantics of Millrace's EchoResponder, recording what it sees; on
 * TCP at {@link Interop#HOST} unless given another transport.
 *
 * <ul>
 *   <li>request-response echoes data and metadata; data {@code error:MSG} fails with an
 *       ApplicationErrorException carrying MSG;
 *   <li>request-stream sends N payloads "0".."N-1" with the request's metadata; data {@code
 *       forever} streams without end (as fast as request-n allows); other data is an application
 *       error;
 *   <li>request-channel echoes every inbound payload, the first included, and completes when the
 *       requester does;
 *   <li>fire-and-forget and metadata push are recorded.
 * </ul>
 */
final class JavaEchoServer implements AutoCloseable {
  static final String FOREVER = "forever";

  final BlockingQueue<Received> fireAndForgets = new LinkedTransferQueue<>();
  final BlockingQueue<String> metadataPushes = new LinkedTransferQueue<>();
  final AtomicInteger requestResponses = new AtomicInteger();
  final AtomicInteger streamEmitted = new AtomicInteger();
  final List<Long> streamRequests = new CopyOnWriteArrayList<>();
  final CountDownLatch streamCancelled = new CountDownLatch(1);
  final List<Received> channelReceived = new CopyOnWriteArrayList<>();
  final CompletableFuture<Void> channelInboundComplete = new CompletableFuture<>();
  final CompletableFuture<RSocket> clientSocket = new CompletableFuture<>();

  private final CloseableChannel channel;

  private JavaEchoServer(
      ServerTransport<CloseableChannel> transport, UnaryOperator<RSocketServer> customizer) {
    RSocketServer server =
        RSocketServer.create(
            (setup, sendingSocket) -> {
              clientSocket.complete(sendingSocket);
              return Mono.just(new Handler());
            });
    channel = customizer.apply(server).bind(transport).block(Interop.TIMEOUT);
  }

  static JavaEchoServer start() {
    return start(UnaryOperator.identity());
  }

  /** Starts a server after {@code customizer} configured it (fragmentation, leases). */
  static JavaEchoServer start(UnaryOperator<RSocketServer> customizer) {
    return new JavaEchoServer(TcpServerTransport.create(Interop.HOST, 0), customizer);
  }

  /** Starts a server on {@code transport} (WebSocket, TLS, a Unix domain socket). */
  static JavaEchoServer startOn(ServerTransport<CloseableChannel> transport) {
    return new JavaEchoServer(transport, UnaryOperator.identity());
  }

  /** The port of a server on an IP transport. */
  int port() {
    return channel.address().getPort();
  }

  @Override
  public void close() {
    channel.dispose();
    channel.onClose().onErrorResume(e -> Mono.empty()).block(Interop.TIMEOUT);
  }

  private final class Handler implements RSocket {
    @Override
    public Mono<Void> fireAndForget(Payload payload) {
      fireAndForgets.add(Interop.receive(payload));
      return Mono.empty();
    }

    @Override
    public Mono<Void> metadataPush(Payload payload) {
      try {
        metadataPushes.add(Interop.utf8(payload.getMetadata()));
      } finally {
        payload.release();
      }
      return Mono.empty();
    }

    @Override
    public Mono<Payload> requestResponse(Payload payload) {
      requestResponses.incrementAndGet();
      Received request = Interop.receive(payload);
      if (request.data().startsWith("error:")) {
        return Mono.error(new ApplicationErrorException(request.data().substring(6)));
      }
      return Mono.just(Interop.payload(request.data(), request.metadata()));
    }

    @Override
    public Flux<Payload> requestStream(Payload payload) {
      Received request = Interop.receive(payload);
      Flux<Payload> items;
      if (request.data().equals(FOREVER)) {
        items =
            Flux.<Payload, Long>generate(
                () -> 0L,
                (i, sink) -> {
                  sink.next(Interop.payload(Long.toString(i), request.metadata()));
                  return i + 1;
                });
      } else {
        int count;
        try {
          count = Integer.parseInt(request.data());
        } catch (NumberFormatException e) {
          return Flux.error(
              new ApplicationErrorException(
                  "request-stream data must be a decimal count, got '" + request.data() + "'"));
        }
        items =
            Flux.range(0, count).map(i -> Interop.payload(Integer.toString(i), request.metadata()));
      }
      return items
          .doOnNext(p -> streamEmitted.incrementAndGet())
          .doOnRequest(streamRequests::add)
          .doOnCancel(streamCancelled::countDown);
    }

    @Override
    public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
      return Flux.from(payloads)
          .map(
              p -> {
                Received in = Interop.receive(p);
                channelReceived.add(in);
                return Interop.payload(in.data(), in.metadata());
              })
          .doOnComplete(() -> channelInboundComplete.complete(null));
    }
  }
}
