package io.millrace.streams.internal;

import io.millrace.streams.Payload;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Relays a flavour's Publisher to one of Millrace's subscribers. A flavour subclasses it with its
 * library's relaxed subscriber type (Reactor's {@code CoreSubscriber}, RxJava's {@code
 * FlowableSubscriber}), so that the library signals it directly instead of through the serialising
 * wrapper it puts around foreign subscribers (atomic updates on every signal, an object per
 * subscription). Millrace's subscribers need no such guard: those libraries' operators signal their
 * own subscriber types serially, and Millrace's subscribers accept items delivered inside their own
 * {@code request} or {@code onSubscribe}.
 *
 * <p>The relay is the subscription its subscriber sees, so that the one rule those libraries relax
 * for their own subscribers still holds for it: a request of zero or less fails the subscription
 * (rule 3.9) instead of being ignored.
 */
public abstract class Relay<T> implements Subscriber<T>, Subscription {
  /**
   * A subscriber of Millrace's own that may be relayed to: it accepts signals in the relaxed order
   * of those libraries' own subscriber types (an item inside its own {@code onSubscribe} or {@code
   * request}, its requests made inside {@code onSubscribe} going upstream at once). Code that
   * relays only some subscribers (the generated RPC bindings) relays these and leaves any other, an
   * interceptor's say, to the library's own rules and Context.
   */
  public interface Target {}

  private final Subscriber<? super T> actual;
  private Subscription upstream;

  /**
   * After an invalid request: the subscriber was told, nothing more is relayed. Plain: the invalid
   * request's error is signalled on the requesting thread, not serialised against a source that
   * signals on another thread at that moment. Millrace's subscribers, the only ones relayed to,
   * never request less than one, so the guard is the rule's letter, not a path they take.
   */
  private boolean done;

  protected Relay(Subscriber<? super T> actual) {
    if (actual == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    this.actual = actual;
  }

  @Override
  public final void onSubscribe(Subscription s) {
    if (s == null) {
      throw new NullPointerException("subscription"); // rule 2.13
    }
    if (upstream != null) {
      s.cancel(); // rule 2.5: Reactor signals a second one when an item's delivery threw inside the
      return; // first; the first stays, so a later cancel still reaches the source
    }
    upstream = s;
    actual.onSubscribe(this);
  }

  @Override
  public final void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("item"); // rule 2.13
    }
    if (!done) {
      actual.onNext(t);
    } else if (t instanceof Payload p) {
      p.release(); // after an invalid request, from a source that emitted all the same
    }
  }

  @Override
  public final void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable"); // rule 2.13
    }
    if (!done) {
      done = true;
      actual.onError(t);
    }
  }

  @Override
  public final void onComplete() {
    if (!done) {
      done = true;
      actual.onComplete();
    }
  }

  @Override
  public final void request(long n) {
    if (n > 0) {
      upstream.request(n);
    } else if (!done) {
      done = true;
      upstream.cancel();
      actual.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
    }
  }

  @Override
  public final void cancel() {
    upstream.cancel();
  }
}
