package io.millrace.reactor.internal;

import io.millrace.streams.internal.Relay;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.CoreSubscriber;

/**
 * A Mono or Flux whose subscribers are relayed as Reactor {@link CoreSubscriber}s.
 *
 * <p>Why. Reactor wraps every subscriber that is not a {@code CoreSubscriber} in a {@code
 * StrictSubscriber}, which serialises each signal with atomic updates and defers requests made
 * inside {@code onSubscribe}: a cost on every item of a stream. Millrace's subscribers need neither
 * guard (see {@link Relay}). The relay subscribes through {@link Publisher#subscribe}, so the
 * Publisher's assembly hooks still apply.
 */
public final class DirectAnswer<T> implements Publisher<T> {
  private final Publisher<T> source;

  private DirectAnswer(Publisher<T> source) {
    this.source = source;
  }

  /** {@code source} (null stays null), relaying to each subscriber as a CoreSubscriber. */
  public static <T> Publisher<T> of(Publisher<T> source) {
    return source == null ? null : new DirectAnswer<>(source);
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    source.subscribe(new CoreRelay<>(subscriber));
  }

  private static final class CoreRelay<T> extends Relay<T> implements CoreSubscriber<T> {
    CoreRelay(Subscriber<? super T> actual) {
      super(actual);
    }
  }
}
