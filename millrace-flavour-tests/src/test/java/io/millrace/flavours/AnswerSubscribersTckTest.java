package io.millrace.flavours;

import io.millrace.reactor.internal.MonoAnswer;
import io.millrace.streams.Payload;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK on the Subscribers through which the reactive flavours take a handler's
 * answer from its library: the Reactor responder's {@link MonoAnswer} (a request-response's Mono),
 * the Mutiny requester's request-response Uni (which subscribes the call's Publisher itself) and
 * the relays of the Reactor and RxJava flavours ({@code DirectAnswer}'s, which pass a Flux's or a
 * Flowable's items on to one of Millrace's subscribers, here one that asks for everything). Each is
 * caught as its library subscribes it to a source that keeps its subscriber and signals nothing
 * itself: the TCK signals it.
 */
public class AnswerSubscribersTckTest extends SubscriberBlackboxVerification<Payload> {
  private final String name;
  private final Function<Publisher<Payload>, Publisher<Payload>> answer;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new AnswerSubscribersTckTest("MonoAnswer", source -> MonoAnswer.of(Mono.from(source))),
      new AnswerSubscribersTckTest("Reactor relay", io.millrace.reactor.internal.DirectAnswer::of),
      new AnswerSubscribersTckTest(
          "AnswerUni (Mutiny request-response)",
          source -> {
            io.millrace.mutiny.internal.AnswerUni.of(source)
                .subscribe()
                .with(p -> p.release(), t -> {}); // subscribes the call's Publisher: caught
            return null;
          }),
      new AnswerSubscribersTckTest(
          "RxJava relay",
          source ->
              io.millrace.rxjava.internal.DirectAnswer.of(
                  io.reactivex.rxjava3.core.Flowable.fromPublisher(source))),
    };
  }

  public AnswerSubscribersTckTest(
      String name, Function<Publisher<Payload>, Publisher<Payload>> answer) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.answer = answer;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Subscriber<Payload> createSubscriber() {
    AtomicReference<Subscriber<? super Payload>> caught = new AtomicReference<>();
    Publisher<Payload> source =
        new Mono<Payload>() { // a CorePublisher: Reactor and RxJava hand it their own subscriber
          @Override
          public void subscribe(CoreSubscriber<? super Payload> actual) {
            caught.set(actual);
          }
        };
    Publisher<Payload> answered = answer.apply(source);
    if (caught.get() == null && answered != null) { // a relay subscribes its source when it is
      answered.subscribe(new TakingAll());
    }
    return (Subscriber<Payload>) caught.get();
  }

  @Override
  public Payload createElement(int element) {
    return Payload.of(new byte[] {(byte) element});
  }

  @Override
  public String toString() {
    return name;
  }

  /** One of Millrace's subscribers, asking for everything and keeping nothing. */
  private static final class TakingAll
      implements Subscriber<Payload>, io.millrace.streams.internal.Relay.Target {
    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Payload p) {
      p.release();
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }
}
