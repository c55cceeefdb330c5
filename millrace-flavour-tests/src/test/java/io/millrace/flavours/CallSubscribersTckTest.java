package io.millrace.flavours;

import io.millrace.futures.internal.BlockingIterator;
import io.millrace.futures.internal.FutureSubscriber;
import io.millrace.observer.StreamObserver;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.observer.internal.OneResponse;
import io.millrace.streams.Payload;
import java.util.function.Supplier;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the Subscribers through which the futures and observer flavours take
 * a call's answers: {@link FutureSubscriber} (a request-response as a CompletableFuture), {@link
 * BlockingIterator} (a stream read by blocking) and {@link OneResponse} (a unary call's response
 * for a StreamObserver).
 */
public class CallSubscribersTckTest extends SubscriberBlackboxVerification<Payload> {
  private final String name;
  private final Supplier<Subscriber<Payload>> subscribers;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new CallSubscribersTckTest("FutureSubscriber", FutureSubscriber::new),
      new CallSubscribersTckTest("BlockingIterator", BlockingIterator::new),
      new CallSubscribersTckTest(
          "OneResponse", () -> new OneResponse<>(new Ignoring(), ObserverCall.PAYLOADS)),
    };
  }

  public CallSubscribersTckTest(String name, Supplier<Subscriber<Payload>> subscribers) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.subscribers = subscribers;
  }

  @Override
  public Subscriber<Payload> createSubscriber() {
    return subscribers.get();
  }

  @Override
  public Payload createElement(int element) {
    return Payload.of(new byte[] {(byte) element});
  }

  @Override
  public String toString() {
    return name;
  }

  /** A response observer that keeps nothing (the TCK checks the Subscriber, not the observer). */
  private static final class Ignoring implements StreamObserver<Payload> {
    @Override
    public void onNext(Payload value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }
}
