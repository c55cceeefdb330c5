package io.millrace.streams.internal;

import java.util.concurrent.Callable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A Publisher whose one item (or emptiness, or error) can be had by a plain call instead of a
 * subscription: one that is also a {@link Callable}. Reactor's {@code Mono.just}, {@code
 * Mono.fromCallable}, {@code Mono.fromSupplier}, {@code Mono.empty}, {@code Mono.error} and {@code
 * Flux.just} of one item are; Reactor's own operators ({@code flatMap}, {@code zip}) rely on the
 * same convention: {@code call()} returns the item, null when there is none, or throws the error,
 * and does what a subscription would have done, on the calling thread.
 *
 * <p>Why. A handler that answers at once is the common case of a unary call. Subscribing to such a
 * Mono with a subscriber that is not Reactor's own costs a wrapper that serialises every signal
 * with atomic updates, a subscription object, and about eight atomic operations; the call costs
 * none of that.
 */
public final class Scalar {
  private Scalar() {}

  /** Whether {@code p}'s outcome can be had by {@link #signal}. */
  public static boolean is(Publisher<?> p) {
    return p instanceof Callable;
  }

  /**
   * Signals {@code p}'s outcome to {@code s} as a subscription would have, but with no {@code
   * onSubscribe} and regardless of demand (the caller has checked it): the item if there is one,
   * then completion; or the error.
   */
  @SuppressWarnings("unchecked")
  public static <T> void signal(Publisher<T> p, Subscriber<? super T> s) {
    T value;
    try {
      value = ((Callable<T>) p).call();
    } catch (VirtualMachineError e) {
      s.onError(e); // the call ends, then the error goes on up
      throw e;
    } catch (Throwable t) {
      s.onError(t);
      return;
    }
    if (value != null) {
      s.onNext(value);
    }
    s.onComplete();
  }
}
