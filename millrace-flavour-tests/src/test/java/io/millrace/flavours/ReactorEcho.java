package io.millrace.flavours;

import static io.millrace.flavours.Behaviour.*;

import io.millrace.core.StreamErrorException;
import io.millrace.reactor.ReactorHandler;
import io.millrace.streams.Payload;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** {@link Behaviour} as a Reactor user writes it. */
final class ReactorEcho implements ReactorHandler {
  private final Probe probe;

  ReactorEcho(Probe probe) {
    this.probe = probe;
  }

  @Override
  public Mono<Void> fireAndForget(Payload payload) {
    probe.fireAndForgets.add(payload.dataUtf8());
    return Mono.empty();
  }

  @Override
  public Mono<Void> metadataPush(Payload payload) {
    probe.metadataPushes.add(payload.metadataUtf8());
    return Mono.empty();
  }

  @Override
  public Mono<Payload> requestResponse(Payload payload) {
    switch (payload.dataUtf8()) {
      case FAIL:
        return Mono.error(new IllegalArgumentException("failed"));
      case THROW:
        throw new IllegalStateException("thrown");
      case CODE:
        return Mono.error(new StreamErrorException(USER_CODE, "custom"));
      case EMPTY:
        return Mono.empty();
      case NEVER:
        return Mono.<Payload>never().doOnCancel(probe::answerCancelled);
      default:
        return Mono.just(echo(payload));
    }
  }

  @Override
  public Flux<Payload> requestStream(Payload payload) {
    String request = payload.dataUtf8();
    if (request.equals(THROW)) {
      throw new IllegalStateException("thrown");
    }
    if (request.equals(NEVER)) {
      return Flux.<Payload>never().doOnCancel(probe::cancelled);
    }
    if (request.equals(FAIL)) {
      return Flux.range(0, 3)
          .map(i -> Payload.of(item(i, 0)))
          .concatWith(Flux.error(new IllegalArgumentException("failed")));
    }
    long n = count(request);
    int size = size(request);
    return Flux.<Payload, Long>generate(
            () -> 0L,
            (i, sink) -> {
              sink.next(pooled(item(i, size)));
              return i + 1;
            })
        .take(n, true)
        // Off the loop only when asked: publishOn's queue would drop pooled payloads on cancel.
        .transform(f -> request.startsWith(ASYNC) ? f.publishOn(Schedulers.parallel()) : f)
        .doOnNext(p -> probe.emitted())
        .doOnCancel(probe::cancelled);
  }

  @Override
  public Flux<Payload> requestChannel(Payload first, Flux<Payload> inbound) {
    if (first.dataUtf8().equals(THROW)) {
      first.release();
      throw new IllegalStateException("a handler's bug"); // the method itself throws
    }
    int take = taken(first);
    if (take >= 0) {
      return Flux.concat(Mono.just(first), inbound.take(take));
    }
    return Flux.concat(
            Mono.just(first),
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
