package io.millrace.bench.millrace;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.LongAdder;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Millrace's Reactor flavour, used as a Reactor user would: handlers return {@code Mono.just},
 * {@code Flux.generate} and a concatenated echo; the client subscribes a lambda per
 * request-response and a {@link BaseSubscriber} that requests {@link MillraceSystem#INITIAL} and
 * then {@link MillraceSystem#BATCH} per batch on streams and channels (as the rsocket-java client
 * does in this harness).
 */
public final class MillraceReactorSystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-reactor";
  }

  @Override
  Responder responder(ByteBuf response, LongAdder handled) {
    return ReactorResponder.of(
        new ReactorHandler() {
          @Override
          public Mono<Payload> requestResponse(Payload payload) {
            handled.increment();
            return Mono.just(Payload.of(response));
          }

          @Override
          public Mono<Void> fireAndForget(Payload payload) {
            handled.increment();
            return Mono.empty();
          }

          @Override
          public Flux<Payload> requestStream(Payload payload) {
            return Flux.generate(
                sink -> {
                  handled.increment();
                  sink.next(Payload.of(response));
                });
          }

          @Override
          public Flux<Payload> requestChannel(Payload first, Flux<Payload> inbound) {
            return Flux.concat(Mono.just(first), inbound).doOnNext(p -> handled.increment());
          }
        });
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    ReactorRequester requester = ReactorRequester.of(connection);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        requester
            .requestResponse(Payload.of(payload))
            .subscribe(p -> onResponse.run(), e -> {}); // a call failed as the run ends
      }

      @Override
      void fireAndForget() {
        requester.fireAndForget(Payload.of(payload)).subscribe();
      }

      @Override
      void startStream(LongAdder received) {
        Batching<Payload> consumer = new Batching<>(received);
        onStop(consumer::dispose);
        requester.requestStream(Payload.of(payload)).subscribe(consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        Batching<Payload> consumer = new Batching<>(received);
        onStop(consumer::dispose);
        requester
            .requestChannel(Flux.generate(sink -> sink.next(Payload.of(payload))))
            .subscribe(consumer);
      }
    };
  }

  /** Requests INITIAL up front and BATCH more each time a batch arrived, counting every item. */
  static final class Batching<T> extends BaseSubscriber<T> {
    private final LongAdder received;
    private int sinceRequest;

    Batching(LongAdder received) {
      this.received = received;
    }

    @Override
    protected void hookOnSubscribe(Subscription subscription) {
      subscription.request(MillraceSystem.INITIAL);
    }

    @Override
    protected void hookOnNext(T value) {
      received.increment();
      if (++sinceRequest == MillraceSystem.BATCH) {
        sinceRequest = 0;
        request(MillraceSystem.BATCH);
      }
    }
  }
}
