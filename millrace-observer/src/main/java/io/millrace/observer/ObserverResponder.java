package io.millrace.observer;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Signatures;
import io.millrace.observer.internal.ObserverCall;
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
 * Serves an {@link ObserverHandler}: the engine's {@link Responder} for it. Each call's observer
 * knows its connection's event loop (to tell a handler on the loop, which must not wait, from one
 * on an executor, which may), so the responder keeps one adapter per loop.
 */
public final class ObserverResponder implements Responder {
  static {
    Signatures.resolve(
        ObserverResponder.class, Adapter.class); // so that C2 may inline calls to their methods
  }

  private final ObserverHandler handler;
  private final StreamsOptions options;
  private final ConcurrentHashMap<EventExecutor, Responder> byLoop = new ConcurrentHashMap<>();

  private ObserverResponder(ObserverHandler handler, StreamsOptions options) {
    this.handler = handler;
    this.options = options;
  }

  public static Responder of(ObserverHandler handler) {
    return new ObserverResponder(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(ObserverHandler handler, StreamsOptions options) {
    return new ObserverResponder(handler, options);
  }

  private Responder on(EventExecutor loop) {
    Responder r = byLoop.get(loop);
    return r != null
        ? r
        : byLoop.computeIfAbsent(
            loop, l -> ReactiveResponder.of(new Adapter(handler, l, options.prefetch()), options));
  }

  @Override
  public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
    on(connection.executor()).fireAndForget(connection, metadata, data);
  }

  @Override
  public void metadataPush(Connection connection, ByteBuf metadata) {
    on(connection.executor()).metadataPush(connection, metadata);
  }

  @Override
  public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    return on(stream.connection().executor()).requestResponse(stream, metadata, data);
  }

  @Override
  public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    return on(stream.connection().executor()).requestStream(stream, metadata, data);
  }

  @Override
  public StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    return on(stream.connection().executor())
        .requestChannel(stream, metadata, data, inboundComplete);
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
            call.receiveFirst(first); // the value that opened the channel, on the loop, first
            inbound.subscribe(call.inbound());
          });
    }
  }
}
