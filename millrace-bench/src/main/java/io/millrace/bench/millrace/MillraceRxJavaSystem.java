package io.millrace.bench.millrace;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.rxjava.RxJavaHandler;
import io.millrace.rxjava.RxJavaRequester;
import io.millrace.rxjava.RxJavaResponder;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.subscribers.DisposableSubscriber;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace's RxJava 3 flavour, used as an RxJava user would: handlers return {@code Single.just},
 * {@code Flowable.generate} and a concatenated echo; the client subscribes lambdas per
 * request-response and a {@link DisposableSubscriber} that requests {@link MillraceSystem#INITIAL}
 * and then {@link MillraceSystem#BATCH} per batch on streams and channels.
 */
public final class MillraceRxJavaSystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-rxjava";
  }

  @Override
  Responder responder(ByteBuf response, LongAdder handled) {
    return RxJavaResponder.of(
        new RxJavaHandler() {
          @Override
          public Single<Payload> requestResponse(Payload payload) {
            handled.increment();
            return Single.just(Payload.of(response));
          }

          @Override
          public Completable fireAndForget(Payload payload) {
            handled.increment();
            return Completable.complete();
          }

          @Override
          public Flowable<Payload> requestStream(Payload payload) {
            return Flowable.generate(
                emitter -> {
                  handled.increment();
                  emitter.onNext(Payload.of(response));
                });
          }

          @Override
          public Flowable<Payload> requestChannel(Payload first, Flowable<Payload> inbound) {
            return Flowable.concat(Flowable.just(first), inbound)
                .doOnNext(p -> handled.increment());
          }
        });
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    RxJavaRequester requester = RxJavaRequester.of(connection);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        requester.requestResponse(Payload.of(payload)).subscribe(p -> onResponse.run(), e -> {});
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
            .requestChannel(Flowable.generate(emitter -> emitter.onNext(Payload.of(payload))))
            .subscribe(consumer);
      }
    };
  }

  /** Requests INITIAL up front and BATCH more each time a batch arrived, counting every item. */
  static final class Batching<T> extends DisposableSubscriber<T> {
    private final LongAdder received;
    private int sinceRequest;

    Batching(LongAdder received) {
      this.received = received;
    }

    @Override
    protected void onStart() {
      request(MillraceSystem.INITIAL);
    }

    @Override
    public void onNext(T value) {
      received.increment();
      if (++sinceRequest == MillraceSystem.BATCH) {
        sinceRequest = 0;
        request(MillraceSystem.BATCH);
      }
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }
}
