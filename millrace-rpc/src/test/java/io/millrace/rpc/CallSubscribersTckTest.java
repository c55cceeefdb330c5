package io.millrace.rpc;

import com.google.protobuf.Int32Value;
import io.millrace.streams.Payload;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the RPC runtime's Subscribers of messages: {@link ResponsePublisher}
 * as the subscriber of a handler's responses (a stream's, a native caller's) and {@link
 * PrefixedPublisher} as the subscriber of the messages behind a first one (a routing caller's
 * requests, a client's messages behind its channel's header). Each is caught as it subscribes to a
 * source that keeps its subscriber and signals nothing itself; the TCK signals it, and its own
 * subscriber asks for everything.
 */
public class CallSubscribersTckTest extends SubscriberBlackboxVerification<Int32Value> {
  private final String name;
  private final Function<Publisher<Int32Value>, Publisher<?>> over;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new CallSubscribersTckTest(
          "ResponsePublisher",
          source -> ResponsePublisherTckTest.responses(TestService.echoContext(), false, source)),
      new CallSubscribersTckTest(
          "PrefixedPublisher",
          source ->
              new PrefixedPublisher<Int32Value, Int32Value>(
                  () -> Int32Value.of(-1), source, m -> m, unused -> {})),
    };
  }

  public CallSubscribersTckTest(String name, Function<Publisher<Int32Value>, Publisher<?>> over) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.over = over;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Subscriber<Int32Value> createSubscriber() {
    AtomicReference<Subscriber<? super Int32Value>> caught = new AtomicReference<>();
    Publisher<Int32Value> source = caught::set;
    over.apply(source).subscribe(new TakingAll());
    return (Subscriber<Int32Value>) caught.get();
  }

  @Override
  public Int32Value createElement(int element) {
    return Int32Value.of(element);
  }

  @Override
  public String toString() {
    return name;
  }

  /** The call's other side: asks for everything and keeps nothing. */
  private static final class TakingAll implements Subscriber<Object> {
    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Object item) {
      if (item instanceof Payload p) {
        p.release();
      }
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }
}
