package io.millrace.mutiny.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.UnaryAnswer;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import org.reactivestreams.Publisher;

/**
 * A handler's request-response {@code Uni} as the Publisher the engine's layer takes the answer
 * from: subscribed directly, where {@code toMulti()} and the Flow-to-Reactive-Streams adapter cost
 * six objects and a strict subscriber's atomics per call. The Uni is subscribed as the handler
 * returns it (the layer subscribes right after, on the same thread, so nothing can come between),
 * and an answer that is there at once ({@code Uni.createFrom().item}, a chain of such) is handed
 * over as known: the layer sends it without a subscription. A null item ends the call without an
 * answer.
 */
public final class UniPayloadAnswer extends UnaryAnswer<Payload> implements UniSubscriber<Payload> {
  private volatile UniSubscription upstream;

  private UniPayloadAnswer() {}

  /** Null (the layer fails the call) for null; else subscribed, and settled if it answered. */
  public static Publisher<Payload> of(Uni<Payload> uni) {
    if (uni == null) {
      return null;
    }
    UniPayloadAnswer answer = new UniPayloadAnswer();
    AbstractUni.subscribe(uni, answer);
    return answer.settled();
  }

  @Override
  public void onSubscribe(UniSubscription subscription) {
    upstream = subscription;
    if (cancelled()) {
      subscription.cancel(); // cancelled before the Uni gave its subscription
    }
  }

  @Override
  public void onItem(Payload item) {
    answer(item);
  }

  @Override
  public void onFailure(Throwable failure) {
    fail(failure);
  }

  @Override
  protected void onCancelled() {
    UniSubscription s = upstream;
    if (s != null) {
      s.cancel();
    }
  }

  @Override
  protected void discard(Payload response) {
    response.release();
  }
}
