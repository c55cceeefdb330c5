package io.millrace.streams;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on a requester channel's inbound Publisher: the client sends n payloads
 * and the responder echoes each.
 */
public class RequesterChannelTckTest extends EchoPublisherTck<Payload> {

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    Flux<Payload> out =
        Flux.generate(
                () -> 0L,
                (Long i, reactor.core.publisher.SynchronousSink<Payload> sink) -> {
                  sink.next(Payload.of(Long.toString(i)));
                  return i + 1;
                })
            .take(elements, true);
    if (elements == 0) {
      return pair.requester().requestChannel(Flux.empty()); // fails: no first payload
    }
    return pair.requester().requestChannel(out);
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    // A call fails only once it is made, which needs demand; the TCK's failed Publisher must fail
    // without any, so those checks do not apply.
    return null;
  }

  @Override
  public long maxElementsFromPublisher() {
    return Long.MAX_VALUE - 1;
  }
}
