package io.millrace.streams;

import org.reactivestreams.Publisher;

/**
 * The Reactive Streams TCK on the request-stream Publisher made from a payload Supplier: it takes
 * any number of subscribers, each its own call, so the TCK's multi-subscriber rules run too.
 */
public class DeferredRequestStreamTckTest extends EchoPublisherTck<Payload> {

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    String n = elements >= Long.MAX_VALUE - 1 ? "inf" : Long.toString(elements);
    return pair.requester().requestStream(() -> Payload.of(n));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return pair.requester()
        .requestStream(
            () -> {
              throw new IllegalStateException("no payload");
            });
  }
}
