package io.millrace.flavours;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.futures.BlockingRequester;
import io.millrace.futures.BlockingStream;
import io.millrace.futures.FutureRequester;
import io.millrace.mutiny.MutinyRequester;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ClientResponseObserver;
import io.millrace.observer.ObserverRequester;
import io.millrace.reactor.ReactorRequester;
import io.millrace.rxjava.RxJavaRequester;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.transport.netty.MillraceClient;
import io.rsocket.RSocket;
import io.rsocket.RSocketErrorException;
import io.rsocket.core.RSocketConnector;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.util.DefaultPayload;
import java.util.concurrent.TimeUnit;
import mutiny.zero.flow.adapters.AdaptersToFlow;
import mutiny.zero.flow.adapters.AdaptersToReactiveStreams;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One requester flavour's connection, its calls seen as Reactive Streams Publishers so that one
 * test subscriber drives them all: each flavour's own types are made by its requester and only then
 * viewed as Publishers (Single and Uni through their library's own conversion).
 */
interface Client extends AutoCloseable {

  Publisher<Payload> requestResponse(Payload p);

  Publisher<Payload> requestStream(Payload p);

  Publisher<Payload> requestChannel(Publisher<Payload> payloads);

  Publisher<Void> fireAndForget(Payload p);

  /** Connection-level metadata, sent in a pooled buffer made as the call is made. */
  Publisher<Void> metadataPush(String metadata);

  /** Drops the connection as a failure would. */
  void breakConnection();

  /**
   * Reads {@code p}'s stream with {@code reader}'s code, as a user of the flavour writes it: here a
   * lambda given to a Flux's subscribe; flavours with other idioms override. Returns once reading
   * has started.
   */
  default void readStream(Payload p, ThrowingReader reader) {
    Flux.from(requestStream(p)).subscribe(reader::read, reader::told);
  }

  @Override
  void close();

  enum Flavour {
    STREAMS,
    REACTOR,
    RXJAVA,
    MUTINY,
    OBSERVER,
    FUTURES,
    RSOCKET_JAVA;

    /** Whether the flavour makes request-channel calls (the futures flavour has none). */
    boolean channels() {
      return this != FUTURES;
    }

    Client connect(int port) throws Exception {
      switch (this) {
        case STREAMS:
          return new OverMillrace(port) {
            final ReactiveRequester r = ReactiveRequester.of(connection);

            @Override
            public Publisher<Payload> requestResponse(Payload p) {
              return r.requestResponse(p);
            }

            @Override
            public Publisher<Payload> requestStream(Payload p) {
              return r.requestStream(p);
            }

            /**
             * A Subscriber of the application's own that asks for one at a time (so that payloads
             * also wait in the layer's queue) and whose onNext throws (rule 2.13 forbids it).
             */
            @Override
            public void readStream(Payload p, ThrowingReader reader) {
              r.requestStream(p)
                  .subscribe(
                      new org.reactivestreams.Subscriber<Payload>() {
                        private org.reactivestreams.Subscription s;

                        @Override
                        public void onSubscribe(org.reactivestreams.Subscription s) {
                          this.s = s;
                          s.request(1);
                        }

                        @Override
                        public void onNext(Payload item) {
                          reader.read(item);
                          s.request(1);
                        }

                        @Override
                        public void onError(Throwable t) {
                          reader.told(t);
                        }

                        @Override
                        public void onComplete() {}
                      });
            }

            @Override
            public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
              return r.requestChannel(payloads);
            }

            @Override
            public Publisher<Void> fireAndForget(Payload p) {
              return r.fireAndForget(p);
            }

            @Override
            public Publisher<Void> metadataPush(String metadata) {
              return Mono.defer(
                  () -> Mono.from(r.metadataPush(Behaviour.pooledMetadata(metadata))));
            }
          };
        case REACTOR:
          return new OverMillrace(port) {
            final ReactorRequester r = ReactorRequester.of(connection);

            @Override
            public Publisher<Payload> requestResponse(Payload p) {
              return r.requestResponse(p);
            }

            @Override
            public Publisher<Payload> requestStream(Payload p) {
              return r.requestStream(p);
            }

            @Override
            public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
              return r.requestChannel(Flux.from(payloads));
            }

            @Override
            public Publisher<Void> fireAndForget(Payload p) {
              return r.fireAndForget(p);
            }

            @Override
            public Publisher<Void> metadataPush(String metadata) {
              return Mono.defer(
                  () -> Mono.from(r.metadataPush(Behaviour.pooledMetadata(metadata))));
            }
          };
        case RXJAVA:
          return new OverMillrace(port) {
            final RxJavaRequester r = RxJavaRequester.of(connection);

            @Override
            public Publisher<Payload> requestResponse(Payload p) {
              return r.requestResponse(p).toFlowable();
            }

            @Override
            public Publisher<Payload> requestStream(Payload p) {
              return r.requestStream(p);
            }

            @Override
            public void readStream(Payload p, ThrowingReader reader) {
              r.requestStream(p).subscribe(reader::read, reader::told);
            }

            @Override
            public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
              return r.requestChannel(io.reactivex.rxjava3.core.Flowable.fromPublisher(payloads));
            }

            @Override
            public Publisher<Void> fireAndForget(Payload p) {
              return r.fireAndForget(p).toFlowable();
            }

            @Override
            public Publisher<Void> metadataPush(String metadata) {
              return io.reactivex.rxjava3.core.Completable.defer(
                      () -> r.metadataPush(Behaviour.pooledMetadata(metadata)))
                  .toFlowable();
            }
          };
        case MUTINY:
          return new OverMillrace(port) {
            final MutinyRequester r = MutinyRequester.of(connection);

            @Override
            public Publisher<Payload> requestResponse(Payload p) {
              // A Uni's empty answer is a null item, which a Multi skips.
              return AdaptersToReactiveStreams.publisher(r.requestResponse(p).toMulti());
            }

            @Override
            public Publisher<Payload> requestStream(Payload p) {
              return AdaptersToReactiveStreams.publisher(r.requestStream(p));
            }

            @Override
            public void readStream(Payload p, ThrowingReader reader) {
              r.requestStream(p).subscribe().with(reader::read, reader::told);
            }

            @Override
            public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
              return AdaptersToReactiveStreams.publisher(
                  r.requestChannel(AdaptersToFlow.publisher(payloads)));
            }

            @Override
            public Publisher<Void> fireAndForget(Payload p) {
              return AdaptersToReactiveStreams.publisher(r.fireAndForget(p).toMulti());
            }

            @Override
            public Publisher<Void> metadataPush(String metadata) {
              return AdaptersToReactiveStreams.publisher(
                  io.smallrye.mutiny.Uni.createFrom()
                      .deferred(() -> r.metadataPush(Behaviour.pooledMetadata(metadata)))
                      .toMulti());
            }
          };
        case OBSERVER:
          return new ObserverClient(port);
        case FUTURES:
          return new FuturesClient(port);
        case RSOCKET_JAVA:
          return new RSocketJavaClient(port);
        default:
          throw new AssertionError(this);
      }
    }
  }

  /** A Millrace connection over TCP with the suite's config. */
  abstract class OverMillrace implements Client {
    final MillraceClient client;
    final Connection connection;

    OverMillrace(int port) throws Exception {
      client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
      connection = client.connect(Server.HOST, port).get(10, TimeUnit.SECONDS);
    }

    @Override
    public void breakConnection() {
      connection.dispose();
    }

    @Override
    public void close() {
      client.shutdownNow();
      try {
        client.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The futures flavour as its users call it: request-response and fire-and-forget as
   * CompletableFutures (cancelling the subscription cancels the future, and so the call), a stream
   * read by blocking on a thread of its own and closed when the subscriber cancels.
   */
  final class FuturesClient extends OverMillrace {
    final FutureRequester futures;
    final BlockingRequester blocking;

    FuturesClient(int port) throws Exception {
      super(port);
      futures = FutureRequester.of(connection);
      blocking = BlockingRequester.of(connection);
    }

    @Override
    public Publisher<Payload> requestResponse(Payload p) {
      return Mono.fromFuture(() -> futures.requestResponse(p), false);
    }

    @Override
    public Publisher<Payload> requestStream(Payload p) {
      return Flux.using(
              () -> blocking.requestStream(p),
              stream -> Flux.fromIterable(() -> stream),
              BlockingStream::close)
          .subscribeOn(Schedulers.boundedElastic()); // its requests run there too
    }

    /** A blocking loop in try-with-resources, on a thread of its own. */
    @Override
    public void readStream(Payload p, ThrowingReader reader) {
      Thread t =
          new Thread(
              () -> {
                try (BlockingStream stream = blocking.requestStream(p)) {
                  while (stream.hasNext()) {
                    Payload item = stream.next();
                    try {
                      reader.read(item);
                    } finally {
                      item.release(); // the reader's to release, as the flavour documents
                    }
                  }
                } catch (RuntimeException e) {
                  reader.told(e);
                }
              },
              "blocking-reader");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
      throw new UnsupportedOperationException("the futures flavour has no request-channel");
    }

    @Override
    public Publisher<Void> fireAndForget(Payload p) {
      return Mono.fromFuture(() -> futures.fireAndForget(p), false);
    }

    @Override
    public Publisher<Void> metadataPush(String metadata) {
      return Mono.fromFuture(() -> futures.metadataPush(Behaviour.pooledMetadata(metadata)), false);
    }
  }

  /**
   * The StreamObserver flavour, driven the way a grpc-java user drives flow control by hand: the
   * test subscriber's demand becomes {@code request(n)} on the call, its cancel {@code cancel()},
   * and a channel's payloads are pulled one at a time while the call {@code isReady()}.
   */
  final class ObserverClient extends OverMillrace {
    final ObserverRequester r;

    ObserverClient(int port) throws Exception {
      super(port);
      r = ObserverRequester.of(connection);
    }

    @Override
    public Publisher<Payload> requestResponse(Payload p) {
      return observed(
          obs -> {
            r.requestResponse(p, obs);
            return null;
          },
          null);
    }

    @Override
    public Publisher<Payload> requestStream(Payload p) {
      return observed(
          obs -> {
            r.requestStream(p, obs);
            return null;
          },
          null);
    }

    /** A StreamObserver with automatic flow control, as grpc-java users write one. */
    @Override
    public void readStream(Payload p, ThrowingReader reader) {
      r.requestStream(
          p,
          new io.millrace.observer.StreamObserver<>() {
            @Override
            public void onNext(Payload value) {
              reader.read(value);
            }

            @Override
            public void onError(Throwable t) {
              reader.told(t);
            }

            @Override
            public void onCompleted() {}
          });
    }

    @Override
    public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
      return observed(obs -> r.requestChannel(obs), payloads);
    }

    @Override
    public Publisher<Void> fireAndForget(Payload p) {
      return Mono.fromRunnable(() -> r.fireAndForget(p));
    }

    @Override
    public Publisher<Void> metadataPush(String metadata) {
      return Mono.fromRunnable(() -> r.metadataPush(Behaviour.pooledMetadata(metadata)));
    }

    /** A call as a Publisher; {@code payloads}, for a channel, are pumped while it is ready. */
    private static Publisher<Payload> observed(
        java.util.function.Function<
                ClientResponseObserver<Payload, Payload>, ClientCallStreamObserver<Payload>>
            start,
        Publisher<Payload> payloads) {
      return subscriber -> {
        Pump pump = payloads == null ? null : new Pump();
        java.util.concurrent.atomic.AtomicReference<ClientCallStreamObserver<Payload>> call =
            new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean cancelled =
            new java.util.concurrent.atomic.AtomicBoolean();
        ClientResponseObserver<Payload, Payload> responses =
            new ClientResponseObserver<>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<Payload> c) {
                call.set(c);
                c.disableAutoInboundFlowControl();
                if (pump != null) {
                  c.setOnReadyHandler(pump::ready);
                }
              }

              @Override
              public void onNext(Payload value) {
                subscriber.onNext(value);
              }

              @Override
              public void onError(Throwable t) {
                if (pump != null) {
                  pump.stop();
                }
                if (!cancelled.get()) {
                  subscriber.onError(t);
                }
              }

              @Override
              public void onCompleted() {
                if (pump != null) {
                  pump.stop();
                }
                subscriber.onComplete();
              }
            };
        ClientCallStreamObserver<Payload> requests = start.apply(responses);
        subscriber.onSubscribe(
            new org.reactivestreams.Subscription() {
              @Override
              public void request(long n) {
                call.get().request((int) Math.min(n, Integer.MAX_VALUE));
              }

              @Override
              public void cancel() {
                if (cancelled.compareAndSet(false, true)) {
                  if (pump != null) {
                    pump.stop();
                  }
                  call.get().cancel("cancelled by the subscriber", null);
                }
              }
            });
        if (pump != null) {
          pump.start(payloads, requests);
        }
      };
    }

    /** Sends a Publisher's payloads through a call's request observer, one per readiness. */
    private static final class Pump implements org.reactivestreams.Subscriber<Payload> {
      private final java.util.concurrent.atomic.AtomicBoolean waiting =
          new java.util.concurrent.atomic.AtomicBoolean();
      private volatile org.reactivestreams.Subscription s;
      private volatile boolean stopped;
      private ClientCallStreamObserver<Payload> requests;

      void start(Publisher<Payload> payloads, ClientCallStreamObserver<Payload> requests) {
        this.requests = requests;
        payloads.subscribe(this);
      }

      @Override
      public void onSubscribe(org.reactivestreams.Subscription s) {
        this.s = s;
        if (stopped) {
          s.cancel();
        } else {
          s.request(1); // the payload that opens the channel goes out before any credit
        }
      }

      @Override
      public void onNext(Payload p) {
        requests.onNext(p);
        waiting.set(true);
        if (requests.isReady()) {
          ready();
        }
      }

      void ready() {
        if (!stopped && waiting.compareAndSet(true, false)) {
          s.request(1);
        }
      }

      @Override
      public void onError(Throwable t) {
        requests.onError(t);
      }

      @Override
      public void onComplete() {
        requests.onCompleted();
      }

      void stop() {
        stopped = true;
        org.reactivestreams.Subscription sub = s;
        if (sub != null) {
          sub.cancel();
        }
      }
    }
  }

  /**
   * rsocket-java 1.1's requester, its payloads copied into Millrace's and its errors turned into
   * {@link StreamErrorException}s with the same code and message.
   */
  final class RSocketJavaClient implements Client {
    private final RSocket socket;

    RSocketJavaClient(int port) {
      socket =
          RSocketConnector.create()
              .fragment(Behaviour.FRAGMENT_SIZE)
              .connect(TcpClientTransport.create(Server.HOST, port))
              .block(Server.TIMEOUT);
    }

    private static io.rsocket.Payload out(Payload p) {
      String metadata = p.metadata() == null ? null : p.metadataUtf8();
      String data = p.dataUtf8();
      p.release();
      return DefaultPayload.create(data, metadata);
    }

    private static Payload in(io.rsocket.Payload p) {
      Payload copy = Payload.of(p.hasMetadata() ? p.getMetadataUtf8() : null, p.getDataUtf8());
      p.release();
      return copy;
    }

    private static Throwable error(Throwable t) {
      return t instanceof RSocketErrorException
          ? new StreamErrorException(((RSocketErrorException) t).errorCode(), t.getMessage())
          : t;
    }

    @Override
    public Publisher<Payload> requestResponse(Payload p) {
      return Mono.defer(() -> socket.requestResponse(out(p)))
          .map(RSocketJavaClient::in)
          .onErrorMap(RSocketJavaClient::error);
    }

    @Override
    public Publisher<Payload> requestStream(Payload p) {
      return Flux.defer(() -> socket.requestStream(out(p)))
          .map(RSocketJavaClient::in)
          .onErrorMap(RSocketJavaClient::error);
    }

    @Override
    public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
      return socket
          .requestChannel(Flux.from(payloads).map(RSocketJavaClient::out))
          .map(RSocketJavaClient::in)
          .onErrorMap(RSocketJavaClient::error);
    }

    @Override
    public Publisher<Void> fireAndForget(Payload p) {
      return Mono.defer(() -> socket.fireAndForget(out(p)));
    }

    @Override
    public Publisher<Void> metadataPush(String metadata) {
      return Mono.defer(
          () ->
              socket.metadataPush(
                  DefaultPayload.create(
                      new byte[0], metadata.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
    }

    @Override
    public void breakConnection() {
      socket.dispose();
    }

    @Override
    public void close() {
      socket.dispose();
      socket.onClose().onErrorResume(e -> Mono.empty()).block(Server.TIMEOUT);
    }
  }
}
