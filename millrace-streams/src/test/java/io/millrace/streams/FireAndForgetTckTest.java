package io.millrace.streams;

import org.reactivestreams.Publisher;

/** The Reactive Streams TCK on the fire-and-forget Publisher, which emits nothing. */
public class FireAndForgetTckTest extends EchoPublisherTck<Void> {

  @Override
  public long maxElementsFromPublisher() {
    return 0;
  }

  @Override
  public Publisher<Void> createPublisher(long elements) {
    return pair.requester().fireAndForget(Payload.of("ping"));
  }

  @Override
  public Publisher<Void> createFailedPublisher() {
    return subscribedOnce(pair.requester().fireAndForget(Payload.of("ping")));
  }
}
