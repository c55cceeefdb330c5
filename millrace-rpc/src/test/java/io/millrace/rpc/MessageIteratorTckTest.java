package io.millrace.rpc;

import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link MessageIterator}, the Subscriber through which a blocking
 * caller (or a blocking handler) reads a call's messages: it asks for a first window as it is
 * subscribed, more as its reader takes messages.
 */
public class MessageIteratorTckTest extends SubscriberBlackboxVerification<Integer> {

  public MessageIteratorTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Subscriber<Integer> createSubscriber() {
    return new MessageIterator<>(null);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
