package io.millrace.futures;

import io.millrace.core.Responder;
import io.millrace.futures.internal.StagePublisher;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import java.util.concurrent.CompletionStage;
import org.reactivestreams.Publisher;

/** Serves a {@link FutureHandler}: the engine's {@link Responder} for it. */
public final class FutureResponder {
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
      return answer == null ? null : new StagePublisher(answer);
    }
  }
}
