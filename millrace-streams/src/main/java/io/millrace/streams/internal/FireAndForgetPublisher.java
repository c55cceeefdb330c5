package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A fire-and-forget or metadata push, sent when subscribed (no demand needed: nothing is emitted)
 * and completed once handed to the connection. On the event loop a fire-and-forget that cannot be
 * sent (closing, no lease) fails with REJECTED; off the loop the connection logs such a failure.
 */
public final class FireAndForgetPublisher implements Publisher<Void> {
  private final Connection connection;
  private final boolean metadataPush;
  private final AtomicBoolean used = new AtomicBoolean();
  private Payload payload;

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
    if (!used.compareAndSet(false, true)) {
      subscriber.onSubscribe(NoopSubscription.INSTANCE);
      subscriber.onError(
          new IllegalStateException(
              "this Publisher takes one subscriber: it is one call (make the call again)"));
      return;
    }
    Once once = new Once();
    subscriber.onSubscribe(once);
    Payload p = payload;
    payload = null;
    if (once.cancelled) {
      p.release();
      if (once.invalid) {
        subscriber.onError(
            new IllegalArgumentException(
                "request-n must be positive (rule 3.9): " + once.invalidN));
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
  private static final class Once implements Subscription {
    volatile boolean cancelled;
    volatile boolean invalid;
    volatile long invalidN;

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
}
