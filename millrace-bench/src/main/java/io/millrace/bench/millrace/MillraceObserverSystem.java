package io.millrace.bench.millrace;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ClientResponseObserver;
import io.millrace.observer.ObserverHandler;
import io.millrace.observer.ObserverRequester;
import io.millrace.observer.ObserverResponder;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace's StreamObserver flavour, used as a grpc-java user would: a request-response handler
 * calls {@code onNext} and {@code onCompleted}; a streaming handler sends from its on-ready handler
 * while {@code isReady()} (grpc-java's idiom for flow control); the channel handler echoes each
 * value as it comes (automatic flow control); the client passes a new observer per call and
 * receives with automatic flow control, and sends a channel's values from its on-ready handler.
 */
public final class MillraceObserverSystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-observer";
  }

  @Override
  Responder responder(ByteBuf response, LongAdder handled) {
    return ObserverResponder.of(
        new ObserverHandler() {
          @Override
          public void requestResponse(Payload payload, StreamObserver<Payload> answer) {
            handled.increment();
            answer.onNext(Payload.of(response));
            answer.onCompleted();
          }

          @Override
          public void fireAndForget(Payload payload) {
            handled.increment();
          }

          @Override
          public void requestStream(Payload payload, StreamObserver<Payload> responses) {
            ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
            out.setOnReadyHandler(
                () -> {
                  while (out.isReady() && !out.isCancelled()) {
                    handled.increment();
                    out.onNext(Payload.of(response));
                  }
                });
          }

          @Override
          public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
            return new StreamObserver<>() {
              @Override
              public void onNext(Payload value) {
                handled.increment();
                responses.onNext(value);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {
                responses.onCompleted();
              }
            };
          }
        });
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    ObserverRequester requester = ObserverRequester.of(connection);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        requester.requestResponse(
            Payload.of(payload),
            new StreamObserver<>() {
              @Override
              public void onNext(Payload value) {
                onResponse.run();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
      }

      @Override
      void fireAndForget() {
        requester.fireAndForget(Payload.of(payload));
      }

      @Override
      void startStream(LongAdder received) {
        Counting<Payload, Payload> consumer = new Counting<>(received, null);
        onStop(consumer::cancel);
        requester.requestStream(Payload.of(payload), consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        Counting<Payload, Payload> consumer = new Counting<>(received, () -> Payload.of(payload));
        onStop(consumer::cancel);
        requester.requestChannel(consumer);
      }
    };
  }

  /**
   * Counts what it receives; when given a payload to send (a channel), sends it from the on-ready
   * handler while the call is ready.
   */
  static final class Counting<S, R> implements ClientResponseObserver<S, R> {
    private final LongAdder received;
    private final java.util.function.Supplier<S> send;
    private volatile ClientCallStreamObserver<S> call;

    Counting(LongAdder received, java.util.function.Supplier<S> send) {
      this.received = received;
      this.send = send;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<S> call) {
      this.call = call;
      if (send != null) {
        call.setOnReadyHandler(
            () -> {
              while (call.isReady()) {
                call.onNext(send.get());
              }
            });
      }
    }

    @Override
    public void onNext(R value) {
      received.increment();
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}

    void cancel() {
      ClientCallStreamObserver<S> c = call;
      if (c != null) {
        c.cancel("the benchmark ends", null);
      }
    }
  }
}
