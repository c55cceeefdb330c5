package io.millrace.rxjava;

import io.millrace.core.Responder;
import io.millrace.core.internal.Signatures;
import io.millrace.rxjava.internal.CompletableAnswer;
import io.millrace.rxjava.internal.DirectAnswer;
import io.millrace.rxjava.internal.SingleAnswer;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.StreamsOptions;
import io.reactivex.rxjava3.core.Flowable;
import org.reactivestreams.Publisher;

/** Serves an {@link RxJavaHandler}: the engine's {@link Responder} for it. */
public final class RxJavaResponder {
  static {
    Signatures.resolve(
        RxJavaResponder.class,
        Adapter.class,
        SingleAnswer.class,
        CompletableAnswer.class); // so that C2 may inline calls to their methods
  }

  private RxJavaResponder() {}

  public static Responder of(RxJavaHandler handler) {
    return of(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(RxJavaHandler handler, StreamsOptions options) {
    return ReactiveResponder.of(new Adapter(handler), options);
  }

  private static final class Adapter implements ReactiveHandler {
    private final RxJavaHandler handler;

    Adapter(RxJavaHandler handler) {
      this.handler = handler;
    }

    @Override
    public Publisher<Void> fireAndForget(Payload payload) {
      return CompletableAnswer.of(handler.fireAndForget(payload));
    }

    @Override
    public Publisher<Void> metadataPush(Payload payload) {
      return CompletableAnswer.of(handler.metadataPush(payload));
    }

    @Override
    public Publisher<Payload> requestResponse(Payload payload) {
      return SingleAnswer.of(handler.requestResponse(payload));
    }

    @Override
    public Publisher<Payload> requestStream(Payload payload) {
      return DirectAnswer.of(handler.requestStream(payload));
    }

    @Override
    public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
      return DirectAnswer.of(handler.requestChannel(first, Flowable.fromPublisher(inbound)));
    }
  }
}
