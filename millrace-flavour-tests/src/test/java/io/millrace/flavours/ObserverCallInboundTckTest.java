package io.millrace.flavours;

import io.millrace.observer.StreamObserver;
import io.millrace.observer.internal.ObserverCall;
import io.netty.channel.DefaultEventLoop;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the Subscriber through which a StreamObserver call's received values
 * reach the application's observer ({@link ObserverCall#inbound}): a requester's (reading
 * automatically: it asks for everything) and a responder's (granting credit as values are
 * delivered, withheld while its own values wait).
 */
public class ObserverCallInboundTckTest extends SubscriberBlackboxVerification<Integer> {
  private static final DefaultEventLoop LOOP = new DefaultEventLoop();

  private final String name;
  private final boolean requester;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new ObserverCallInboundTckTest("requester inbound", true),
      new ObserverCallInboundTckTest("responder inbound", false),
    };
  }

  public ObserverCallInboundTckTest(String name, boolean requester) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.requester = requester;
  }

  @AfterClass
  public static void stop() {
    LOOP.shutdownGracefully();
  }

  @Override
  public Subscriber<Integer> createSubscriber() {
    ObserverCall<Void, Integer> call =
        new ObserverCall<>(LOOP, ObserverCallTckTest.INTEGERS, 16, false, requester);
    call.receiveWith(
        new StreamObserver<>() {
          @Override
          public void onNext(Integer value) {}

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    return call.inbound();
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }

  @Override
  public String toString() {
    return name;
  }
}
