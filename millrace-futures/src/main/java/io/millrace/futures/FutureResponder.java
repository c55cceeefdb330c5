package io.millrace.futures;

import io.millrace.core.Responder;
import io.millrace.core.internal.Signatures;
import io.millrace.futures.internal.StagePublisher;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import io.millrace.streams.internal.Scalar;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.reactivestreams.Publisher;

/** Serves a {@link FutureHandler}: the engine's {@link Responder} for it. */
public final class FutureResponder {
  static {
    Signatures.resolve(
        FutureResponder.class,
        Adapter.class,
        StagePublisher.class); // so that C2 may inline calls to their methods
  }

  private FutureResponder() {}

  public static Responder of(FutureHandler handler) {
    return of(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(FutureHandler handler, StreamsOptions options) {
    return ReactiveResponder.of(new Adapter(handler), options);
  }

  private static final class Adapter implements ReactiveHandler {
    private final FutureHandler handler;

    Adapter(FutureHandler handler) {
      this.handler = handler;
    }

    @Override
    public Publisher<Void> fireAndForget(Payload payload) {
      handler.fireAndForget(payload);
      return null;
    }

    @Override
    public Publisher<Void> metadataPush(Payload payload) {
      handler.metadataPush(payload);
      return null;
    }

    @Override
    public Publisher<Payload> requestResponse(Payload payload) {
      CompletionStage<Payload> answer = handler.requestResponse(payload);
      if (answer == null) {
        return null;
      }
      if (answer.getClass() == CompletableFuture.class) { // (not a subclass: a minimal stage's
        CompletableFuture<Payload> f = (CompletableFuture<Payload>) answer; // isDone throws)
        if (f.isDone() && !f.isCancelled()) { // (a cancelled one: as subscribed, its own exception)
          return known(f);
        }
      }
      return new StagePublisher(answer);
    }
  }

  /**
   * The outcome of a future that is done, as a Publisher the responder can call instead of
   * subscribing (the common case: {@code completedFuture(answer)}, or a handler on an executor that
   * finished its work before returning): no subscription, no completion hook, no sink. Errors as
   * {@link StagePublisher} gives them: a CompletionException's cause, a cancel's
   * CancellationException.
   */
  private static Publisher<Payload> known(CompletableFuture<Payload> f) {
    try {
      return Scalar.known(f.getNow(null), null);
    } catch (CompletionException e) {
      return Scalar.known(null, StagePublisher.failure(e));
    } catch (CancellationException e) {
      return Scalar.known(null, e);
    }
  }
}
