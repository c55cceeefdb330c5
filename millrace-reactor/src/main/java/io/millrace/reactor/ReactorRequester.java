package io.millrace.reactor;

import static java.util.Objects.requireNonNull;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.reactor.internal.DirectAnswer;
import io.millrace.reactor.internal.DirectMono;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Starts requests on a {@link Connection} as Reactor {@link Mono}s and {@link Flux}es.
 *
 * <p>Each call is lazy: nothing is sent until the Mono or Flux is subscribed and, for the
 * interactions that answer, requested from. Downstream demand becomes REQUEST_N, batched by {@link
 * StreamsOptions#prefetch()} (a {@code limitRate(1)} or {@code concatMap} downstream does not cost
 * a frame per payload); {@code cancel}, {@code take}, {@code timeout} and disposal send CANCEL; an
 * ERROR frame arrives as a {@link io.millrace.core.StreamErrorException} carrying the code.
 *
 * <p>The forms that take a {@link Payload} are one call each, with one subscriber: the payload
 * belongs to Millrace from the call on. The forms that take a {@code Supplier} make a payload, and
 * a call, for each subscriber, so {@code retry()}, {@code repeat()} and resubscription work.
 *
 * <p>Signals come on the connection's event loop: do not block in them ({@code publishOn} moves
 * work elsewhere). Received payloads are heap copies by default and need no release (see {@link
 * Payload}).
 */
public final class ReactorRequester {
  static {
    Signatures.resolve(
        ReactorRequester.class,
        DirectMono.class,
        DirectAnswer.class); // so that C2 may inline calls to their methods
  }

  private final ReactiveRequester requester;

  private ReactorRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static ReactorRequester of(Connection connection) {
    return new ReactorRequester(ReactiveRequester.of(connection));
  }

  public static ReactorRequester of(Connection connection, StreamsOptions options) {
    return new ReactorRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  /** Completes once the payload is handed to the connection (fire-and-forget has no answer). */
  public Mono<Void> fireAndForget(Payload payload) {
    return DirectMono.of(requester.fireAndForget(payload));
  }

  public Mono<Void> fireAndForget(Supplier<Payload> payload) {
    return DirectMono.of(requester.fireAndForget(payload));
  }

  /** Connection-level metadata (ownership taken); completes once handed to the connection. */
  public Mono<Void> metadataPush(ByteBuf metadata) {
    return DirectMono.of(requester.metadataPush(metadata));
  }

  /** The response; empty when the responder completed without one. */
  public Mono<Payload> requestResponse(Payload payload) {
    return DirectMono.of(requester.requestResponse(payload));
  }

  public Mono<Payload> requestResponse(Supplier<Payload> payload) {
    return DirectMono.of(requester.requestResponse(payload));
  }

  public Flux<Payload> requestStream(Payload payload) {
    return Flux.from(requester.requestStream(payload));
  }

  public Flux<Payload> requestStream(Supplier<Payload> payload) {
    return Flux.from(requester.requestStream(payload));
  }

  /**
   * A channel opened by the first payload of {@code payloads}; the rest are sent as the responder
   * grants credit (never requested faster). Cancelling the returned Flux ends the whole channel;
   * each subscriber opens its own channel and subscribes {@code payloads} again, which sees that
   * subscriber's Context ({@code requestChannel(payloads).contextWrite(...)} reaches {@code
   * payloads}, as a Context reaches the inner Publishers of Reactor's own operators).
   */
  public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
    requireNonNull(payloads, "payloads");
    return Flux.deferContextual(
        context -> requester.requestChannel(DirectAnswer.of(payloads, context)));
  }
}
