package io.millrace.mutiny;

import static mutiny.zero.flow.adapters.AdaptersToFlow.publisher;
import static mutiny.zero.flow.adapters.AdaptersToReactiveStreams.publisher;

import io.millrace.core.Responder;
import io.millrace.core.internal.Signatures;
import io.millrace.mutiny.internal.UniAnswer;
import io.millrace.mutiny.internal.UniPayloadAnswer;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import io.smallrye.mutiny.Multi;
import org.reactivestreams.Publisher;

/** Serves a {@link MutinyHandler}: the engine's {@link Responder} for it. */
public final class MutinyResponder {
  static {
    Signatures.resolve(
        MutinyResponder.class,
        Adapter.class,
        UniAnswer.class,
        UniPayloadAnswer.class); // so that C2 may inline calls to their methods
  }

  private MutinyResponder() {}

  public static Responder of(MutinyHandler handler) {
    return of(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(MutinyHandler handler, StreamsOptions options) {
    return ReactiveResponder.of(new Adapter(handler), options);
  }

  /** Mutiny speaks {@code java.util.concurrent.Flow}; the engine's layer Reactive Streams. */
  private static final class Adapter implements ReactiveHandler {
    private final MutinyHandler handler;

    Adapter(MutinyHandler handler) {
      this.handler = handler;
    }

    @Override
    public Publisher<Void> fireAndForget(Payload payload) {
      return UniAnswer.of(handler.fireAndForget(payload));
    }

    @Override
    public Publisher<Void> metadataPush(Payload payload) {
      return UniAnswer.of(handler.metadataPush(payload));
    }

    @Override
    public Publisher<Payload> requestResponse(Payload payload) {
      return UniPayloadAnswer.of(handler.requestResponse(payload));
    }

    @Override
    public Publisher<Payload> requestStream(Payload payload) {
      return publisher(handler.requestStream(payload));
    }

    @Override
    public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
      Multi<Payload> in = Multi.createFrom().publisher(publisher(inbound));
      return publisher(handler.requestChannel(first, in));
    }
  }
}
