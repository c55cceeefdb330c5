package io.millrace.mutiny.internal;

import io.millrace.streams.Payload;
import io.millrace.streams.internal.PayloadAnswer;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import org.reactivestreams.Publisher;

/**
 * A handler's request-response {@code Uni} as the Publisher the engine's layer takes the answer
 * from: subscribed directly, where {@code toMulti()} and the Flow-to-Reactive-Streams adapter cost
 * 88 bytes more per call (both sides of the in-process pipe benchmark) and a strict subscriber's
 * atomics. The Uni is subscribed as the handler returns it, on the handler's thread (the layer
 * subscribes to this right after, on the same thread); through {@code toMulti()} it was subscribed
 * on the first request, once the stream could send. An answer that is there at once ({@code
 * Uni.createFrom().item}, a chain of such) is handed over as known, and the layer sends it by a
 * plain call when the stream can take it at once. A null item completes the call empty, with no
 * response.
 */
public final class UniPayloadAnswer extends PayloadAnswer<UniSubscription>
    implements UniSubscriber<Payload> {
  private UniPayloadAnswer() {}

  /** Null (the layer fails the call) for null; else subscribed, and settled if it answered. */
  public static Publisher<Payload> of(Uni<Payload> uni) {
    if (uni == null) {
      return null;
    }
    return subscribedAtOnce(uni, new UniPayloadAnswer(), AbstractUni::subscribe);
  }

  @Override
  public void onSubscribe(UniSubscription subscription) {
    keep(subscription);
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
  protected void stop(UniSubscription s) {
    s.cancel();
  }
}
