package io.millrace.observer;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Signatures;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.observer.internal.StreamHandlers;
import io.millrace.observer.internal.UnaryObserver;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;
import org.reactivestreams.Publisher;

/**
 * Serves an {@link ObserverHandler}: the engine's {@link Responder} for it.
 *
 * <p><b>Where handlers run.</b> With no {@link StreamsOptions#handlerExecutor()}, fire-and-forget,
 * metadata push and request-response handlers run on the connection's event loop (they send at most
 * one value, which never waits), and stream and channel handlers on a shared executor (a virtual
 * thread each on JDK 21+, else a pool of at most 1,024 daemon threads named {@code
 * millrace-observer-N}, of which one connection's handlers may hold 256; a handler that finds none
 * free fails its call with REJECTED), so that one that calls {@code onNext} in a loop, as grpc-java
 * code does, is held back by the peer's credit instead of filling memory. Sending from the on-ready
 * handler while {@code isReady()} costs nothing more: the on-ready handler, received values and the
 * on-cancel handler run on the event loop wherever the handler itself ran. {@link #onEventLoop}
 * runs every handler on the loop (saving a thread hand-off per stream, for handlers that follow
 * {@code isReady}); an executor in the options runs every handler there.
 *
 * <p>Each call's observer knows its connection's event loop (to tell a handler on the loop, which
 * must not wait, from one on an executor, which may), so the responder keeps its adapters per loop.
 */
public final class ObserverResponder implements Responder {
  static {
    Signatures.resolve(
        ObserverResponder.class, Adapter.class); // so that C2 may inline calls to their methods
  }

  private final ObserverHandler handler;
  private final StreamsOptions options;

  /**
   * Whether stream and channel handlers run on the shared executor (no executor, not all on loop).
   */
  private final boolean offloads;

  private final ConcurrentHashMap<EventExecutor, Responders> byLoop = new ConcurrentHashMap<>();

  /**
   * Where handlers are offloaded: each connection's streams responder, over its share of the shared
   * executor ({@link StreamHandlers#forConnection}); removed as the connection closes.
   */
  private final ConcurrentHashMap<Connection, Responder> streamsByConnection =
      new ConcurrentHashMap<>();

  /** A loop's adapter, and its responder for everything not offloaded. */
  private record Responders(Adapter adapter, Responder calls) {}

  private ObserverResponder(ObserverHandler handler, StreamsOptions options, boolean allOnLoop) {
    this.handler = handler;
    this.options = options;
    this.offloads = !allOnLoop && options.handlerExecutor() == null;
  }

  /** Serves {@code handler} with {@link StreamsOptions#DEFAULT}: streams on the shared executor. */
  public static Responder of(ObserverHandler handler) {
    return new ObserverResponder(handler, StreamsOptions.DEFAULT, false);
  }

  /**
   * Serves {@code handler}: on the options' handler executor if they give one, else as {@link
   * #of(ObserverHandler)}.
   */
  public static Responder of(ObserverHandler handler, StreamsOptions options) {
    return new ObserverResponder(handler, options, false);
  }

  /**
   * Serves {@code handler} with every handler on the event loop, streams and channels included:
   * their handlers must send as {@code isReady()} allows (from the on-ready handler), for a handler
   * that runs ahead of its peer's credit on the loop cannot be held back: past about a mebibyte of
   * values waiting, its call fails. The options must give no handler executor.
   */
  public static Responder onEventLoop(ObserverHandler handler, StreamsOptions options) {
    if (options.handlerExecutor() != null) {
      throw new IllegalArgumentException("the options give a handler executor");
    }
    return new ObserverResponder(handler, options, true);
  }

  private Responders on(EventExecutor loop) {
    Responders r = byLoop.get(loop);
    return r != null ? r : byLoop.computeIfAbsent(loop, this::responders);
  }

  private Responders responders(EventExecutor loop) {
    Adapter adapter = new Adapter(handler, loop, options.prefetch());
    return new Responders(adapter, ReactiveResponder.of(adapter, options));
  }

  /** The responder for {@code connection}'s streams and channels. */
  private Responder streams(Connection connection) {
    Responders loop = on(connection.executor());
    if (!offloads) {
      return loop.calls();
    }
    Responder r = streamsByConnection.get(connection);
    if (r != null) {
      return r;
    }
    Responder made =
        ReactiveResponder.of(
            loop.adapter(),
            options.toBuilder().handlerExecutor(StreamHandlers.forConnection()).build());
    Responder prior = streamsByConnection.putIfAbsent(connection, made);
    if (prior != null) {
      return prior;
    }
    // (At once if it has closed already.)
    connection.onClose().whenComplete((reason, t) -> streamsByConnection.remove(connection));
    return made;
  }

  @Override
  public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
    on(connection.executor()).calls().fireAndForget(connection, metadata, data);
  }

  @Override
  public void metadataPush(Connection connection, ByteBuf metadata) {
    on(connection.executor()).calls().metadataPush(connection, metadata);
  }

  @Override
  public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    return on(stream.connection().executor()).calls().requestResponse(stream, metadata, data);
  }

  @Override
  public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    return streams(stream.connection()).requestStream(stream, metadata, data);
  }

  @Override
  public StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    return streams(stream.connection()).requestChannel(stream, metadata, data, inboundComplete);
  }

  private static final class Adapter implements ReactiveHandler {
    private final ObserverHandler handler;
    private final EventExecutor loop;
    private final int prefetch;

    Adapter(ObserverHandler handler, EventExecutor loop, int prefetch) {
      this.handler = handler;
      this.loop = loop;
      this.prefetch = prefetch;
    }

    @Override
    public Publisher<Void> fireAndForget(Payload payload) {
      handler.fireAndForget(payload);
      return null;
    }

    @Override
    public Publisher<Void> metadataPush(Payload payload) {
      handler.metadataPush(payload);
      return null;
    }

    private ObserverCall<Payload, Payload> call() {
      return new ObserverCall<>(loop, ObserverCall.PAYLOADS, prefetch, true, false);
    }

    /**
     * One answer: a {@link UnaryObserver}, whose handler runs at once on the loop (the streams
     * layer subscribes right after, on the same thread) and when the layer subscribes on a handler
     * executor (so that the caller's cancel reaches a handler still running there).
     */
    @Override
    public Publisher<Payload> requestResponse(Payload payload) {
      return UnaryObserver.answer(
          loop.inEventLoop(),
          loop,
          ObserverCall.PAYLOADS,
          response -> handler.requestResponse(payload, response));
    }

    @Override
    public Publisher<Payload> requestStream(Payload payload) {
      ObserverCall<Payload, Payload> call = call();
      return call.serving(() -> handler.requestStream(payload, call));
    }

    @Override
    public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
      ObserverCall<Payload, Payload> call = call();
      call.holdEndUntilReceiving();
      return call.serving(
          () -> {
            StreamObserver<Payload> requests;
            try {
              requests = handler.requestChannel(call);
              if (requests == null) {
                throw new NullPointerException("the handler returned no observer for requests");
              }
            } catch (RuntimeException e) {
              first.release();
              throw e;
            }
            call.receiveWith(requests);
            call.receive(first, inbound); // the value that opened the channel, then the rest
          });
    }
  }
}
