package io.millrace.mutiny.internal;

import io.millrace.core.Connection;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.FireAndForgetPublisher;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A fire-and-forget or metadata push as one Uni that is also its subscriber's subscription: one
 * object per call where a Uni made from the Reactive Streams Publisher took five (Publisher, Flow
 * adapter, Uni, and two subscribers). It sends when subscribed and emits null once the payload is
 * handed to the connection. One call, so one subscriber: a second gets a failure; {@code
 * MutinyRequester}'s Supplier forms make a new one per subscription.
 */
public final class SendUni extends AbstractUni<Void> implements UniSubscription {
  private final Connection connection;
  private final boolean metadataPush;
  private Payload payload;
  private volatile int used;
  private volatile boolean cancelled;

  private static final AtomicIntegerFieldUpdater<SendUni> USED =
      AtomicIntegerFieldUpdater.newUpdater(SendUni.class, "used");

  private SendUni(Connection connection, Payload payload, boolean metadataPush) {
    this.connection = connection;
    this.payload = payload;
    this.metadataPush = metadataPush;
  }

  public static Uni<Void> of(Connection connection, Payload payload, boolean metadataPush) {
    return Infrastructure.onUniCreation(new SendUni(connection, payload, metadataPush));
  }

  @Override
  public void subscribe(UniSubscriber<? super Void> subscriber) {
    if (!USED.compareAndSet(this, 0, 1)) {
      subscriber.onSubscribe(() -> {});
      subscriber.onFailure(FireAndForgetPublisher.subscribedTwice());
      return;
    }
    Payload p = payload;
    payload = null;
    try {
      subscriber.onSubscribe(this);
    } catch (Throwable e) {
      p.release();
      throw e;
    }
    if (cancelled) {
      p.release(); // cancelled in onSubscribe: nothing is sent
      return;
    }
    Throwable failure = FireAndForgetPublisher.send(connection, p, metadataPush);
    if (cancelled) {
      if (failure != null) {
        Infrastructure.handleDroppedException(failure); // as Mutiny reports a dropped failure
      }
      return;
    }
    if (failure == null) {
      subscriber.onItem(null);
    } else {
      subscriber.onFailure(failure);
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
  }
}
