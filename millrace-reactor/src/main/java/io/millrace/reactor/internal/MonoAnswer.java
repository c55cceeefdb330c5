package io.millrace.reactor.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.PayloadAnswer;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * A handler's request-response {@code Mono} as the Publisher the engine's layer takes the answer
 * from. A Mono known at once and not wrapped by a hook ({@code Mono.just}, {@code fromCallable}:
 * {@link DirectAnswer#callable}) is called, not subscribed, and its outcome handed over as a {@code
 * Scalar}. Any other Mono is subscribed as the handler returns it, on the handler's thread (the
 * layer subscribes to this right after, on the same thread), by this one object as a {@link
 * CoreSubscriber}, where a relay and the layer's sink cost two objects more; an answer that comes
 * at once ({@code Mono.just(x).map(f)}, a chain of such) is then handed over as known, and the
 * layer sends it by a plain call when the stream can take it at once. An empty Mono completes the
 * call empty, with no response.
 */
public final class MonoAnswer extends PayloadAnswer<Subscription>
    implements CoreSubscriber<Payload> {

  private MonoAnswer() {}

  /** Null (the layer fails the call) for null; else called, or subscribed and settled. */
  public static Publisher<Payload> of(Mono<Payload> mono) {
    if (mono == null) {
      return null;
    }
    if (DirectAnswer.callable(mono)) {
      return DirectAnswer.taken(mono);
    }
    // Through Publisher.subscribe, as a Subscriber: Mono.subscribe(CoreSubscriber), which the
    // overload would pick for this CoreSubscriber, skips the onLastOperator hooks.
    return subscribedAtOnce(mono, new MonoAnswer(), (m, a) -> m.subscribe((Subscriber<Payload>) a));
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (s == null) {
      throw new NullPointerException("subscription"); // rule 2.13
    }
    if (kept()) {
      s.cancel(); // rule 2.5: Reactor signals a second one when a source throws after the first
      return;
    }
    if (keep(s)) {
      s.request(Long.MAX_VALUE);
    }
  }

  @Override
  public void onNext(Payload value) {
    if (value == null) {
      throw new NullPointerException("value"); // rule 2.13 (an empty answer is onComplete)
    }
    answer(value); // a second one (a source that breaks the Mono contract) is released
  }

  @Override
  public void onError(Throwable failure) {
    if (failure == null) {
      throw new NullPointerException("failure"); // rule 2.13
    }
    fail(failure);
  }

  @Override
  public void onComplete() {
    answer(null); // after a response, nothing; without one, an empty answer
  }

  @Override
  protected void stop(Subscription s) {
    s.cancel();
  }
}
