package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A fire-and-forget or metadata push, sent when subscribed (no demand needed: nothing is emitted)
 * and completed once handed to the connection. On the event loop a fire-and-forget that cannot be
 * sent (closing, no lease) fails with REJECTED; off the loop the connection logs such a failure.
 */
public final class FireAndForgetPublisher implements Publisher<Void>, Subscription {
  private final Connection connection;
  private final boolean metadataPush;
  private volatile int used;
  private Payload payload;

  // The subscription's state: the publisher is its own subscription (one subscriber), so that a
  // message sent from a thread costs one object here, not three.
  private volatile boolean cancelled;
  private volatile boolean invalid;
  private volatile long invalidN;

  private static final AtomicIntegerFieldUpdater<FireAndForgetPublisher> USED =
      AtomicIntegerFieldUpdater.newUpdater(FireAndForgetPublisher.class, "used");

  private FireAndForgetPublisher(Connection connection, Payload payload, boolean metadataPush) {
    this.connection = connection;
    this.payload = payload;
    this.metadataPush = metadataPush;
  }

  public static Publisher<Void> fireAndForget(Connection connection, Payload payload) {
    return new FireAndForgetPublisher(connection, payload, false);
  }

  public static Publisher<Void> metadataPush(Connection connection, Payload payload) {
    return new FireAndForgetPublisher(connection, payload, true);
  }

  @Override
  public void subscribe(Subscriber<? super Void> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber");
    }
    if (!USED.compareAndSet(this, 0, 1)) {
      subscriber.onSubscribe(NoopSubscription.INSTANCE);
      subscriber.onError(
          new IllegalStateException(
              "this Publisher takes one subscriber: it is one call (make the call again)"));
      return;
    }
    Payload p = payload;
    payload = null;
    try {
      subscriber.onSubscribe(this);
    } catch (RuntimeException | Error e) {
      p.release(); // a subscriber that throws (rule 2.13 forbids it) gets nothing sent
      throw e;
    }
    if (cancelled) {
      p.release();
      if (invalid) {
        subscriber.onError(
            new IllegalArgumentException("request-n must be positive (rule 3.9): " + invalidN));
      }
      return;
    }
    boolean sent;
    try {
      if (metadataPush) {
        p.data().release();
        connection.metadataPush(p.metadata());
        sent = true;
      } else {
        sent = connection.fireAndForget(p.metadata(), p.data());
      }
    } catch (RuntimeException e) {
      subscriber.onError(e);
      return;
    }
    if (sent) {
      subscriber.onComplete();
    } else {
      subscriber.onError(
          StreamErrorException.received(
              ErrorCode.REJECTED, "not sent: the connection is closing or has no lease"));
    }
  }

  /** Nothing is emitted, so demand only matters when it is invalid (before the send). */
  @Override
  public void request(long n) {
    if (n <= 0 && !cancelled) {
      invalidN = n;
      invalid = true;
      cancelled = true;
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
  }
}
