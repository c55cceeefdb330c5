package io.millrace.reactor;

import io.millrace.core.Responder;
import io.millrace.core.internal.Signatures;
import io.millrace.reactor.internal.DirectAnswer;
import io.millrace.reactor.internal.MonoAnswer;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Serves a {@link ReactorHandler}: the engine's {@link Responder} for it. */
public final class ReactorResponder {
  static {
    Signatures.resolve(
        ReactorResponder.class,
        Adapter.class,
        DirectAnswer.class,
        MonoAnswer.class); // so that C2 may inline calls to their methods
  }

  private ReactorResponder() {}

  public static Responder of(ReactorHandler handler) {
    return of(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(ReactorHandler handler, StreamsOptions options) {
    return ReactiveResponder.of(new Adapter(handler), options);
  }

  private static final Mono<Void> EMPTY = Mono.empty();

  /**
   * A handler's completion, subscribed for its end as Reactor's own subscriber type (no {@code
   * StrictSubscriber} around the engine's). {@code Mono.empty()} is not subscribed at all: it has
   * nothing to run and cannot fail.
   */
  private static Publisher<Void> completion(Mono<Void> done) {
    return done == null || done == EMPTY ? null : DirectAnswer.of(done);
  }

  /** Mono and Flux are Publishers: the handler's answers are relayed as they are. */
  private static final class Adapter implements ReactiveHandler {
    private final ReactorHandler handler;

    Adapter(ReactorHandler handler) {
      this.handler = handler;
    }

    @Override
    public Publisher<Void> fireAndForget(Payload payload) {
      return completion(handler.fireAndForget(payload));
    }

    @Override
    public Publisher<Void> metadataPush(Payload payload) {
      return completion(handler.metadataPush(payload));
    }

    @Override
    public Publisher<Payload> requestResponse(Payload payload) {
      return MonoAnswer.of(handler.requestResponse(payload));
    }

    @Override
    public Publisher<Payload> requestStream(Payload payload) {
      return DirectAnswer.of(handler.requestStream(payload));
    }

    @Override
    public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
      return DirectAnswer.of(handler.requestChannel(first, Flux.from(inbound)));
    }
  }
}
