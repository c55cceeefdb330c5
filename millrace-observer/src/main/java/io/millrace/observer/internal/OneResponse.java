package io.millrace.observer.internal;

import io.millrace.observer.StreamObserver;
import java.lang.System.Logger.Level;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A unary call's response for an observer that cannot steer the call (not a {@code
 * ClientResponseObserver}): one object, where {@link ObserverCall} keeps its sending, credit and
 * cancel state for calls that need them. The observer flavour's request-response and the RPC
 * layer's unary calls use it. The observer hears what it would from ObserverCall: the response and
 * the end on the connection's event loop, and when its {@code onNext} throws, that exception in
 * {@code onError} (the call has ended with its answer by then; a cancel is sent only if it had
 * not). A value it will not get is let go by the rules.
 */
public final class OneResponse<V> implements Subscriber<V> {
  private static final System.Logger LOG = System.getLogger(OneResponse.class.getName());

  private final StreamObserver<V> target;
  private final ObserverCall.Rules rules;
  private Subscription upstream;
  private boolean done; // the call's signals come one at a time

  public OneResponse(StreamObserver<V> target, ObserverCall.Rules rules) {
    if (target == null) {
      throw new NullPointerException("responses");
    }
    this.target = target;
    this.rules = rules;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (upstream != null) {
      s.cancel(); // rule 2.5: one subscription, the first
      return;
    }
    upstream = s;
    s.request(1);
  }

  @Override
  public void onNext(V value) {
    if (value == null) {
      throw new NullPointerException("value"); // rule 2.13
    }
    if (done) {
      rules.release(value);
      return;
    }
    try {
      target.onNext(value);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "observer's onNext threw; told in onError", e);
      done = true;
      upstream.cancel();
      ObserverCall.tellError(target, e);
    }
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("error"); // rule 2.13
    }
    if (!done) {
      done = true;
      ObserverCall.tellError(target, t);
    }
  }

  @Override
  public void onComplete() {
    if (!done) {
      done = true;
      ObserverCall.tellCompleted(target);
    }
  }
}
