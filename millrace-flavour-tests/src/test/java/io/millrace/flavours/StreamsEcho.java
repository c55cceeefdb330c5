package io.millrace.flavours;

import io.millrace.reactor.ReactorHandler;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * {@link Behaviour} for the base Reactive Streams responder ({@code ReactiveResponder}, which the
 * reactive flavours stand on): a {@link ReactiveHandler} whose Publishers are a Reactor echo's, so
 * that the suite meets the base layer's own adapter, not the Reactor flavour's.
 */
final class StreamsEcho implements ReactiveHandler {
  private final ReactorHandler behaviour;

  StreamsEcho(ReactorHandler behaviour) {
    this.behaviour = behaviour;
  }

  @Override
  public Publisher<Void> fireAndForget(Payload payload) {
    return behaviour.fireAndForget(payload);
  }

  @Override
  public Publisher<Void> metadataPush(Payload payload) {
    return behaviour.metadataPush(payload);
  }

  @Override
  public Publisher<Payload> requestResponse(Payload payload) {
    return behaviour.requestResponse(payload);
  }

  @Override
  public Publisher<Payload> requestStream(Payload payload) {
    return behaviour.requestStream(payload);
  }

  @Override
  public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
    return behaviour.requestChannel(first, Flux.from(inbound));
  }
}
