package io.millrace.mutiny.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.FireAndForgetPublisher;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.EmptyUniSubscription;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A request-response as a Uni that is also the subscriber of the call's Publisher and its own
 * subscriber's subscription: one object per call where a Uni made from the Publisher took five (a
 * Flow adapter each way, the Uni, and its subscriber with Mutiny's atomics). The call starts when
 * this is subscribed; its answer is the item, its empty completion a null item, its failure the
 * failure. One call, so one subscriber: a second gets a failure; {@code MutinyRequester}'s Supplier
 * form makes a new one per subscription.
 */
public final class AnswerUni extends AbstractUni<Payload>
    implements Subscriber<Payload>, UniSubscription {
  private static final AtomicIntegerFieldUpdater<AnswerUni> USED =
      AtomicIntegerFieldUpdater.newUpdater(AnswerUni.class, "used");

  private final Publisher<Payload> call;
  private UniSubscriber<? super Payload> downstream; // null once cancelled (best effort)
  private boolean answered; // signals are serial (the call's rules)
  private volatile Subscription upstream;
  private volatile boolean cancelled;
  private volatile int used;

  private AnswerUni(Publisher<Payload> call) {
    this.call = call;
  }

  /** {@code call}: a request-response's Publisher, which starts the call when requested from. */
  public static Uni<Payload> of(Publisher<Payload> call) {
    return Infrastructure.onUniCreation(new AnswerUni(call));
  }

  @Override
  public void subscribe(UniSubscriber<? super Payload> subscriber) {
    if (!USED.compareAndSet(this, 0, 1)) {
      EmptyUniSubscription.propagateFailureEvent(
          subscriber, FireAndForgetPublisher.subscribedTwice());
      return;
    }
    downstream = subscriber;
    call.subscribe(this);
  }

  // ------------------------------------------------------------------ the call's signals

  @Override
  public void onSubscribe(Subscription s) {
    if (s == null) {
      throw new NullPointerException("subscription"); // rule 2.13
    }
    if (upstream != null) {
      s.cancel(); // rule 2.5: one call, one subscription
      return;
    }
    upstream = s;
    downstream.onSubscribe(this);
    if (!cancelled) {
      // (Not asked when cancelled inside onSubscribe, which cancelled the call already. A cancel
      // from another thread may overlap this request: the call's state settles which one wins.)
      s.request(1);
    }
  }

  @Override
  public void onNext(Payload p) {
    if (p == null) {
      throw new NullPointerException("payload"); // rule 2.13
    }
    answered = true;
    UniSubscriber<? super Payload> d = downstream;
    if (d == null) {
      p.release(); // cancelled: nobody takes it (a cancel that comes after this check is the
      return; // subscriber's to handle, as Mutiny drops an item it no longer wants)
    }
    d.onItem(p);
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable"); // rule 2.13
    }
    UniSubscriber<? super Payload> d = downstream;
    if (d != null) {
      d.onFailure(t);
    }
  }

  @Override
  public void onComplete() {
    UniSubscriber<? super Payload> d = downstream;
    if (!answered && d != null) {
      d.onItem(null); // completed without an answer
    }
  }

  // ------------------------------------------------------------------ the subscriber's side

  @Override
  public void cancel() {
    cancelled = true;
    downstream = null; // nothing is signalled after a cancel: the subscriber is not kept
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
  }
}
