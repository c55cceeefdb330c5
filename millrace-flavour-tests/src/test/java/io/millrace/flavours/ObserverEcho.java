package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.millrace.core.StreamErrorException;
import io.millrace.observer.ObserverHandler;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.streams.Payload;

/**
 * {@link Behaviour} as a grpc-java user writes it: streams sent from the on-ready handler while
 * {@code isReady()}, and {@code async:N} from a thread of its own that simply calls {@code onNext}
 * and is held back by the peer's credit.
 */
final class ObserverEcho implements ObserverHandler {
  private final Probe probe;

  ObserverEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public void fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.dataUtf8());
  }

  @Override
  public void metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.metadataUtf8());
  }

  @Override
  public void requestResponse(Payload payload, StreamObserver<Payload> response) {
    switch (payload.dataUtf8()) {
      case FAIL:
        response.onError(new IllegalArgumentException("failed"));
        return;
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE:
        response.onError(new StreamErrorException(USER_CODE, "custom"));
        return;
      case EMPTY:
        response.onCompleted();
        return;
      case NEVER:
        ((ServerCallStreamObserver<Payload>) response).setOnCancelHandler(probe::answerCancelled);
        return;
      default:
        response.onNext(echo(payload));
        response.onCompleted();
    }
  }

  @Override
  public void requestStream(Payload payload, StreamObserver<Payload> responses) {
    String request = payload.dataUtf8();
    if (request.equals(THROW)) {
      throw new IllegalStateException("thrown");
    }
    if (request.equals(FAIL)) {
      for (int i = 0; i < 3; i++) {
        responses.onNext(Payload.of(item(i, 0)));
      }
      responses.onError(new IllegalArgumentException("failed"));
      return;
    }
    ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
    out.setOnCancelHandler(probe::cancelled);
    long n = count(request);
    int size = size(request);
    if (request.startsWith(ASYNC)) {
      Thread producer =
          new Thread(
              () -> {
                for (long i = 0; i < n && !out.isCancelled(); i++) {
                  out.onNext(pooled(item(i, size))); // waits while the peer is behind
                  probe.emitted();
                }
                out.onCompleted();
              });
      producer.setDaemon(true);
      producer.start();
      return;
    }
    long[] next = {0};
    boolean[] done = {false};
    out.setOnReadyHandler(
        () -> {
          while (out.isReady() && next[0] < n) {
            out.onNext(pooled(item(next[0]++, size)));
            probe.emitted();
          }
          if (next[0] == n && !done[0]) {
            done[0] = true;
            out.onCompleted();
          }
        });
  }

  @Override
  public StreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
    ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
    out.setOnCancelHandler(probe::cancelled);
    return new StreamObserver<>() {
      boolean failed;

      @Override
      public void onNext(Payload value) {
        if (failed) {
          value.release();
        } else if (value.dataUtf8().equals(FAIL)) {
          failed = true;
          out.onError(new IllegalArgumentException("failed"));
        } else if (value.dataUtf8().equals(THROW)) {
          value.release();
          throw new IllegalStateException("a handler's bug"); // the call fails with it
        } else {
          out.onNext(value);
        }
      }

      @Override
      public void onError(Throwable t) {
        if (!failed) {
          failed = true;
          out.onError(t);
        }
      }

      @Override
      public void onCompleted() {
        if (!failed) {
          out.onCompleted();
        }
      }
    };
  }
}
