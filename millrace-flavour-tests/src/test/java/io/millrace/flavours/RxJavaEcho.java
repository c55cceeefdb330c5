package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.millrace.core.StreamErrorException;
import io.millrace.rxjava.RxJavaHandler;
import io.millrace.streams.Payload;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.schedulers.Schedulers;

/** {@link Behaviour} as an RxJava user writes it. */
final class RxJavaEcho implements RxJavaHandler {
  private final Probe probe;

  RxJavaEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public Completable fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.dataUtf8());
    return Completable.complete();
  }

  @Override
  public Completable metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.metadataUtf8());
    return Completable.complete();
  }

  @Override
  public Single<Payload> requestResponse(Payload payload) {
    switch (payload.dataUtf8()) {
      case FAIL:
        return Single.error(new IllegalArgumentException("failed"));
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE:
        return Single.error(new StreamErrorException(USER_CODE, "custom"));
      case EMPTY:
        return Single.just(Payload.empty()); // a Single has an item: the empty payload
      case NEVER:
        return Single.<Payload>never().doOnDispose(probe::answerCancelled);
      default:
        return Single.just(echo(payload));
    }
  }

  @Override
  public Flowable<Payload> requestStream(Payload payload) {
    String request = payload.dataUtf8();
    if (request.equals(THROW)) {
      throw new IllegalStateException("thrown");
    }
    if (request.equals(FAIL)) {
      return Flowable.range(0, 3)
          .map(i -> Payload.of(item(i, 0)))
          .concatWith(Flowable.error(new IllegalArgumentException("failed")));
    }
    long n = count(request);
    int size = size(request);
    Flowable<Payload> all =
        Flowable.generate(
            () -> 0L,
            (Long i, io.reactivex.rxjava3.core.Emitter<Payload> emitter) -> {
              emitter.onNext(pooled(item(i, size)));
              return i + 1;
            });
    Flowable<Payload> some = n == Long.MAX_VALUE ? all : all.take(n);
    return (request.startsWith(ASYNC) ? some.observeOn(Schedulers.computation()) : some)
        .doOnNext(p -> probe.emitted())
        .doOnCancel(probe::cancelled);
  }

  @Override
  public Flowable<Payload> requestChannel(Payload first, Flowable<Payload> inbound) {
    if (first.dataUtf8().equals(THROW)) {
      first.release();
      throw new IllegalStateException("a handler's bug"); // the method itself throws
    }
    int take = taken(first);
    if (take >= 0) {
      return Flowable.concat(Flowable.just(first), inbound.take(take));
    }
    return Flowable.concat(
            Flowable.just(first),
            inbound.map(
                p -> {
                  if (p.dataUtf8().equals(FAIL)) {
                    throw new IllegalArgumentException("failed");
                  }
                  if (p.dataUtf8().equals(THROW)) {
                    p.release();
                    throw new IllegalStateException("a handler's bug");
                  }
                  return p;
                }))
        .doOnCancel(probe::cancelled);
  }
}
