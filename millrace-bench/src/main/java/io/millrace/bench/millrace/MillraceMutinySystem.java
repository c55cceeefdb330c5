package io.millrace.bench.millrace;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.mutiny.MutinyHandler;
import io.millrace.mutiny.MutinyRequester;
import io.millrace.mutiny.MutinyResponder;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.MultiSubscriber;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace's Mutiny flavour, used as a Mutiny user would: handlers return {@code
 * Uni.createFrom().item}, a {@code Multi} generator and a concatenated echo; the client subscribes
 * callbacks per request-response and a {@link MultiSubscriber} that requests {@link
 * MillraceSystem#INITIAL} and then {@link MillraceSystem#BATCH} per batch on streams and channels.
 */
public final class MillraceMutinySystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-mutiny";
  }

  @Override
  Responder responder(ByteBuf response, LongAdder handled) {
    return MutinyResponder.of(
        new MutinyHandler() {
          @Override
          public Uni<Payload> requestResponse(Payload payload) {
            handled.increment();
            return Uni.createFrom().item(Payload.of(response));
          }

          @Override
          public Uni<Void> fireAndForget(Payload payload) {
            handled.increment();
            return Uni.createFrom().voidItem();
          }

          @Override
          public Multi<Payload> requestStream(Payload payload) {
            return Multi.createFrom()
                .generator(
                    () -> response,
                    (state, emitter) -> {
                      handled.increment();
                      emitter.emit(Payload.of(state));
                      return state;
                    });
          }

          @Override
          public Multi<Payload> requestChannel(Payload first, Multi<Payload> inbound) {
            return Multi.createBy()
                .concatenating()
                .streams(Multi.createFrom().item(first), inbound)
                .onItem()
                .invoke(p -> handled.increment());
          }
        });
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    MutinyRequester requester = MutinyRequester.of(connection);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        requester
            .requestResponse(Payload.of(payload))
            .subscribe()
            .with(p -> onResponse.run(), e -> {});
      }

      @Override
      void fireAndForget() {
        requester.fireAndForget(Payload.of(payload)).subscribe().with(v -> {}, e -> {});
      }

      @Override
      void startStream(LongAdder received) {
        Batching<Payload> consumer = new Batching<>(received);
        onStop(consumer::cancel);
        requester.requestStream(Payload.of(payload)).subscribe().withSubscriber(consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        Batching<Payload> consumer = new Batching<>(received);
        onStop(consumer::cancel);
        Multi<Payload> outbound =
            Multi.createFrom()
                .generator(
                    () -> payload,
                    (state, emitter) -> {
                      emitter.emit(Payload.of(state));
                      return state;
                    });
        requester.requestChannel(outbound).subscribe().withSubscriber(consumer);
      }
    };
  }

  /** Requests INITIAL up front and BATCH more each time a batch arrived, counting every item. */
  static final class Batching<T> implements MultiSubscriber<T> {
    private final LongAdder received;
    private volatile Flow.Subscription subscription;
    private int sinceRequest;

    Batching(LongAdder received) {
      this.received = received;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
      s.request(MillraceSystem.INITIAL);
    }

    @Override
    public void onItem(T value) {
      received.increment();
      if (++sinceRequest == MillraceSystem.BATCH) {
        sinceRequest = 0;
        subscription.request(MillraceSystem.BATCH);
      }
    }

    @Override
    public void onFailure(Throwable t) {}

    @Override
    public void onCompletion() {}

    void cancel() {
      Flow.Subscription s = subscription;
      if (s != null) {
        s.cancel();
      }
    }
  }
}
