package io.millrace.streams;

import org.reactivestreams.Publisher;

/**
 * The Reactive Streams TCK on the requester's request-stream Publisher, against a real server: the
 * Publisher of n elements is a request-stream whose responder sends n payloads.
 */
public class RequesterPublisherTckTest extends EchoPublisherTck<Payload> {

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    String n = elements >= Long.MAX_VALUE - 1 ? "inf" : Long.toString(elements);
    return pair.requester().requestStream(Payload.of(n));
  }

  @Override
  public Publisher<Payload> createFailedPublisher() {
    return subscribedOnce(pair.requester().requestStream(Payload.of("3")));
  }
}
