package io.millrace.streams;

import org.reactivestreams.Publisher;

/** The Reactive Streams TCK on the request-response Publisher: one element, or none. */
public class RequestResponseTckTest extends EchoPublisherTck<Payload> {

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    return pair.requester().requestResponse(Payload.of(elements == 0 ? "empty" : "one"));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return subscribedOnce(pair.requester().requestResponse(Payload.of("one")));
  }
}
