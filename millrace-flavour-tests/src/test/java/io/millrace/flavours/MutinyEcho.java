package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.millrace.core.StreamErrorException;
import io.millrace.mutiny.MutinyHandler;
import io.millrace.streams.Payload;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/** {@link Behaviour} as a Mutiny user writes it. */
final class MutinyEcho implements MutinyHandler {
  private final Probe probe;

  MutinyEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public Uni<Void> fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.dataUtf8());
    return Uni.createFrom().voidItem();
  }

  @Override
  public Uni<Void> metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.metadataUtf8());
    return Uni.createFrom().voidItem();
  }

  @Override
  public Uni<Payload> requestResponse(Payload payload) {
    switch (payload.dataUtf8()) {
      case FAIL:
        return Uni.createFrom().failure(new IllegalArgumentException("failed"));
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE:
        return Uni.createFrom().failure(new StreamErrorException(USER_CODE, "custom"));
      case EMPTY:
        return Uni.createFrom().nullItem();
      case NEVER:
        return Uni.createFrom().<Payload>nothing().onCancellation().invoke(probe::answerCancelled);
      default:
        return Uni.createFrom().item(echo(payload));
    }
  }

  @Override
  public Multi<Payload> requestStream(Payload payload) {
    String request = payload.dataUtf8();
    if (request.equals(THROW)) {
      throw new IllegalStateException("thrown");
    }
    if (request.equals(FAIL)) {
      return Multi.createBy()
          .concatenating()
          .streams(
              Multi.createFrom().range(0, 3).map(i -> Payload.of(item(i, 0))),
              Multi.createFrom().failure(new IllegalArgumentException("failed")));
    }
    long n = count(request);
    int size = size(request);
    Multi<Payload> all =
        Multi.createFrom()
            .generator(
                () -> 0L,
                (i, emitter) -> {
                  emitter.emit(pooled(item(i, size)));
                  return i + 1;
                });
    Multi<Payload> some = n == Long.MAX_VALUE ? all : all.select().first(n);
    return (request.startsWith(ASYNC) ? some.emitOn(Infrastructure.getDefaultExecutor()) : some)
        .onItem()
        .invoke(probe::emitted)
        .onCancellation()
        .invoke(probe::cancelled);
  }

  @Override
  public Multi<Payload> requestChannel(Payload first, Multi<Payload> inbound) {
    if (first.dataUtf8().equals(THROW)) {
      first.release();
      throw new IllegalStateException("a handler's bug"); // the method itself throws
    }
    int take = taken(first);
    if (take >= 0) {
      return Multi.createBy()
          .concatenating()
          .streams(Multi.createFrom().item(first), inbound.select().first(take));
    }
    return Multi.createBy()
        .concatenating()
        .streams(
            Multi.createFrom().item(first),
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
        .onCancellation()
        .invoke(probe::cancelled);
  }
}
