package io.millrace.reactor.internal;

import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * A Mono over one of Millrace's own one-call Publishers, which follow the Reactive Streams rules
 * and so take Reactor's {@link CoreSubscriber} as it is: what {@code Mono.fromDirect} does, without
 * its wrapper's type checks on the Publisher.
 *
 * <p>Why. Millrace's call Publishers are their own Subscription (one object per call). {@code
 * Mono.fromDirect}'s wrapper casts the Publisher to {@code Publisher} when made, and Reactor's
 * subscribers cast it to {@code Subscription} when they end: two different interfaces checked on
 * one class in turn. Before JDK 23 the JVM caches one interface per class for such checks, so each
 * call evicts the other's entry and pays a search and a cache write twice (JDK-8180450; RedHat's
 * type-pollution agent showed exactly these two sites, 10 M times each in a 10 s run). Here the
 * field is a {@code Publisher} from the start, so no check is made. Fire-and-forget from a thread
 * in the Reactor flavour went from 4.6 to 5.4-6.0 M/s on JDK 17 (docs/benchmarks.md). Assembly
 * hooks still apply.
 */
public final class DirectMono<T> extends Mono<T> {
  private final Publisher<T> source;

  private DirectMono(Publisher<T> source) {
    this.source = source;
  }

  public static <T> Mono<T> of(Publisher<T> source) {
    return onAssembly(new DirectMono<>(source));
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    source.subscribe(actual);
  }
}
