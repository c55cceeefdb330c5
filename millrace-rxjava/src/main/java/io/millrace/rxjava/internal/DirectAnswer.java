package io.millrace.rxjava.internal;

import io.millrace.streams.internal.Relay;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.FlowableSubscriber;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A Flowable whose subscribers are relayed as RxJava {@link FlowableSubscriber}s.
 *
 * <p>Why. {@code Flowable.subscribe(Subscriber)} wraps every subscriber that is not a {@code
 * FlowableSubscriber} in a {@code StrictSubscriber}, which serialises each signal with atomic
 * updates and defers requests made inside {@code onSubscribe}. Millrace's subscribers need neither
 * guard (see {@link Relay}).
 */
public final class DirectAnswer<T> implements Publisher<T> {
  private final Flowable<T> source;

  private DirectAnswer(Flowable<T> source) {
    this.source = source;
  }

  /** {@code source} (null stays null), relaying to each subscriber as a FlowableSubscriber. */
  public static <T> Publisher<T> of(Flowable<T> source) {
    return source == null ? null : new DirectAnswer<>(source);
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    source.subscribe(new FlowableRelay<>(subscriber));
  }

  private static final class FlowableRelay<T> extends Relay<T> implements FlowableSubscriber<T> {
    FlowableRelay(Subscriber<? super T> actual) {
      super(actual);
    }
  }
}
