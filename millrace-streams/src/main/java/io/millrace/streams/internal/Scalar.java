package io.millrace.streams.internal;

import io.millrace.streams.Payload;
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
   * {@code p}'s outcome, taken now on this thread, as a Scalar that gives it again without running
   * {@code p}'s code: for an answer that must not be taken later on another thread (a handler that
   * ran on an executor, whose answer would otherwise be taken on the event loop when the caller
   * asks). A VirtualMachineError is thrown here.
   */
  @SuppressWarnings("unchecked")
  public static <T> Publisher<T> taken(Publisher<T> p) {
    try {
      return new Taken<>(((Callable<T>) p).call(), null);
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable t) {
      return new Taken<>(null, t);
    }
  }

  /**
   * A Scalar of an outcome already known: {@code value} (null for none), or {@code error} when it
   * is not null. Taken once: called, or subscribed by one subscriber (a payload it holds goes to
   * whichever takes it, and is released by a subscription that ends without signalling it).
   */
  public static <T> Publisher<T> known(T value, Throwable error) {
    return new Taken<>(value, error);
  }

  /** An outcome already taken: the item (null for none) or the error. */
  private static final class Taken<T> implements Publisher<T>, Callable<T> {
    private final T value;
    private final Throwable error;

    Taken(T value, Throwable error) {
      this.value = value;
      this.error = error;
    }

    @Override
    public T call() throws Exception {
      if (error != null) {
        throw Scalar.<RuntimeException>rethrown(error);
      }
      return value;
    }

    /**
     * Gives the outcome as a subscription would: an item on the subscriber's first request, an end
     * without one (an error, or nothing) as soon as onSubscribe has returned.
     */
    @Override
    public void subscribe(Subscriber<? super T> s) {
      if (s == null) {
        throw new NullPointerException("subscriber"); // rule 1.9
      }
      TakenSubscription once = new TakenSubscription(s);
      s.onSubscribe(once);
      if (value == null) {
        once.request(1); // nothing to wait for demand: the end goes out now
      }
    }

    /**
     * The one subscriber's subscription: the outcome goes out once (its calls are serial). An item
     * that never goes out (a cancel, an invalid request) is released when it is a {@link Payload}:
     * it was the runtime's to send, and nobody else holds it.
     */
    private final class TakenSubscription implements org.reactivestreams.Subscription {
      private final Subscriber<? super T> s;
      private boolean done;

      TakenSubscription(Subscriber<? super T> s) {
        this.s = s;
      }

      @Override
      public void request(long n) {
        if (done) {
          return;
        }
        done = true;
        if (n <= 0) {
          drop();
          s.onError(new IllegalArgumentException("request-n must be positive: " + n));
        } else {
          signal(Taken.this, s);
        }
      }

      @Override
      public void cancel() {
        if (!done) {
          done = true;
          drop();
        }
      }

      private void drop() {
        if (value instanceof Payload p) {
          p.release();
        }
      }
    }
  }

  /** Throws {@code t} as it is, checked or not (the compiler sees an unchecked throw). */
  @SuppressWarnings("unchecked")
  public static <E extends Throwable> E rethrown(Throwable t) throws E {
    throw (E) t;
  }

  /**
   * {@code p}'s outcome, taken now on this thread: the item, null when there is none, or the error
   * thrown.
   */
  @SuppressWarnings("unchecked")
  public static <T> T call(Publisher<T> p) throws Exception {
    return ((Callable<T>) p).call();
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
