package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
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
  // message sent from a thread costs one object here, not three; the failure of an invalid
  // request(n) is made when it happens, not kept as a long, so the object is 32 bytes, not 40.
  private volatile boolean cancelled;
  private volatile IllegalArgumentException invalidRequest;

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
      subscriber.onError(subscribedTwice());
      return;
    }
    Payload p = payload;
    payload = null;
    try {
      subscriber.onSubscribe(this);
    } catch (Throwable e) {
      p.release(); // a subscriber that throws (rule 2.13 forbids it) gets nothing sent
      throw e;
    }
    if (cancelled) {
      p.release();
      IllegalArgumentException invalid = invalidRequest;
      if (invalid != null) {
        subscriber.onError(invalid);
      }
      return;
    }
    Throwable failure = send(connection, p, metadataPush);
    if (failure == null) {
      subscriber.onComplete();
    } else {
      subscriber.onError(failure);
    }
  }

  /**
   * Hands a fire-and-forget (or a metadata push) to the connection, which owns the payload from
   * here on. Returns null once it is handed over, else why it was not: REJECTED when the connection
   * is closing or has no lease (known on the event loop only), or what the hand-off threw (its
   * queue full, the loop shut down). The flavours' own types signal the outcome in their library's
   * terms.
   */
  public static Throwable send(Connection connection, Payload payload, boolean metadataPush) {
    ByteBuf data;
    try {
      data = payload.data(); // an encoded payload is encoded here, and its encoder may throw
    } catch (RuntimeException e) {
      payload.release(); // the metadata; nothing reached the connection
      return e;
    }
    try {
      if (metadataPush) {
        data.release();
        connection.metadataPush(payload.metadata());
        return null;
      }
      if (connection.fireAndForget(payload.metadata(), data)) {
        return null;
      }
    } catch (RuntimeException e) {
      return e; // the connection released the buffers
    }
    return StreamErrorException.received(
        ErrorCode.REJECTED, "not sent: the connection is closing or has no lease");
  }

  /** What a second subscriber to a one-call Publisher, Mono, Completable or Uni gets. */
  public static IllegalStateException subscribedTwice() {
    return new IllegalStateException(
        "this Publisher takes one subscriber: it is one call (make the call again)");
  }

  /** Nothing is emitted, so demand only matters when it is invalid (before the send). */
  @Override
  public void request(long n) {
    if (n <= 0 && !cancelled) {
      invalidRequest = new IllegalArgumentException("request-n must be positive (rule 3.9): " + n);
      cancelled = true;
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
  }
}
