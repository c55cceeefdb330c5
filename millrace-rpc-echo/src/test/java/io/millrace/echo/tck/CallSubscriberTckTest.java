package io.millrace.echo.tck;

import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on the generated Mutiny client's {@code CallSubscriber}, the Subscriber
 * a call's Publisher signals when a Uni made by the client is subscribed to.
 */
public class CallSubscriberTckTest extends SubscriberBlackboxVerification<Long> {

  public CallSubscriberTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Subscriber<Long> createSubscriber() {
    return GeneratedMutiny.callSubscriber(
        new UniSubscriber<Long>() {
          @Override
          public void onSubscribe(UniSubscription subscription) {}

          @Override
          public void onItem(Long item) {}

          @Override
          public void onFailure(Throwable failure) {}
        });
  }

  @Override
  public Long createElement(int element) {
    return (long) element;
  }
}
